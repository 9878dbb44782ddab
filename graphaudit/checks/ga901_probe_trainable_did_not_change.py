"""GA901 probe-trainable-did-not-change."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import GroupedCause, one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.evidence.probe import ProbeStep
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Finding
from graphaudit.text import listing, pronouns

if TYPE_CHECKING:
    from graphaudit.capture.training.lr_schedules import ScheduledRate


@dataclass(frozen=True)
class TrainableLeftUnchanged(GroupedCause):
    """Parameters in the optimizer with requires_grad=True that one training step left bit-identical, and why.

    ``why`` is ``"zero-gradient"`` (the loss does not depend on them), ``"zero-rate"`` (their
    learning rate is 0) or ``"rounding"`` (the update fell below the float resolution).
    """

    names_subjects = True
    why: str
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # the subject is a cell all of whose parameters (of those found) are these
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path
    gradient_norms: tuple[float | None, ...] = ()  # "rounding": each parameter's gradient norm
    rates: tuple[float | None, ...] = ()  # "rounding": each parameter's learning rate

    def message(self) -> str:
        they = pronouns(len(self.names))
        what = self.described()
        if self.why == "zero-gradient":
            gradients = "gradient is" if len(self.names) == 1 else "gradients are"
            why = f"{they.possessive} {gradients} exactly zero: the loss does not depend on {they.object}"
        elif self.why == "zero-rate":
            why = f"{they.possessive} learning rate is 0"
        else:
            norms = listing(
                f"{_g(norm)} at rate {_g(rate)}" for norm, rate in zip(self.gradient_norms, self.rates)
            )
            why = (
                f"{they.possessive} gradient (norm {norms}) gives an update below the float resolution of the "
                "values. A gradient that is only rounding noise is what a bias followed by BatchNorm or LayerNorm "
                "gets: the normalisation cancels it"
            )
        return (
            f"{what} {they.be} in the optimizer with requires_grad=True, but one training step left {they.object} "
            f"bit-identical: {why}."
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        if self.why == "zero-gradient":
            return (
                f"Make {self.subject} reach the loss (use the output of the branch that holds {they.object} in the "
                "loss: not multiplied by 0, not behind ops.stop_gradient, not left unused), or freeze "
                f"{they.object} explicitly: requires_grad=False and leave {they.object} out of the optimizer."
            )
        if self.why == "zero-rate":
            return f"Give {self.subject}'s parameter group a non-zero learning rate, or freeze it explicitly."
        return (
            f"If {self.subject} is a bias right before a normalisation layer, build that layer without it "
            "(has_bias=False); otherwise check the learning rate, loss scaling and gradient clipping."
        )


@dataclass(frozen=True)
class WarmUpFromZero(GroupedCause):
    """Parameters a one-step probe cannot judge: their learning-rate schedule is 0 at the step probed."""

    names_subjects = True
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool
    note: str  # a lone parameter's Parameter.name, when it differs from its path
    step: int  # the step probed
    first_nonzero: float | None  # the schedule's first non-zero rate
    first_nonzero_step: int | None  # and its step

    def message(self) -> str:
        they = pronouns(len(self.names))
        what = self.described()
        return (
            f"One training step left {what} bit-identical because the learning-rate schedule gives {they.object} 0 "
            f"at step {self.step}, and {_g(self.first_nonzero)} from step {self.first_nonzero_step} on: a warm-up "
            "that starts from 0. The first step of this recipe changes nothing by design, so a one-step probe "
            f"cannot show whether {they.subject} train."
        )

    def fix(self) -> str:
        return (
            "Nothing to change if the warm-up is intended. To probe the update itself, probe at a step where the "
            "schedule is non-zero, or with a schedule that does not start from 0."
        )


@register(
    "GA901",
    "probe-trainable-did-not-change",
    severity="error",
    also=("warning", "info"),
    needs=(ProbeStep,),
    uses=(OptimizerView, LearningRates),
    causes=(TrainableLeftUnchanged, WarmUpFromZero),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the optimizer should train that one real step left bit-identical.

    What it does:
        Runs one training step (``audit(..., probe=True, inputs=(x, y))``) and reports each
        parameter with ``requires_grad=True`` in the optimizer that did not change at all.
        It is a warning when the gradient was not zero but the update vanished in float
        rounding (a bias right before a BatchNorm), an error otherwise. It is one info
        finding for all the parameters whose learning-rate schedule (a list of per-step
        values or a ``LearningRateSchedule``) is 0 at the step probed and non-zero later: a
        warm-up that starts from 0, whose first step changes nothing by design.
        When every probe step overflowed and was skipped, GA913 says why nothing moved; an optimizer
        parameter the network does not hold is GA202's.

    Why is this bad:
        The static checks read the optimizer's list; only a real step shows that a parameter
        in it gets no update: a branch whose output is multiplied by zero or never used, a
        ``stop_gradient`` in the way, a learning rate of zero for its group.

    Example:
        ```python
        def construct(self, x):
            return self.fc(x) + self.aux(x) * 0.0  # aux never learns
        ```

    Use instead:
        ```python
        def construct(self, x):
            return self.fc(x) + self.aux(x)
        ```
    """
    if ctx.need(ProbeStep).applied_steps == 0:
        return  # every probe step overflowed and was skipped: no update was applied, nothing could change
    rates = ctx.get(LearningRates) if ctx.optimizer is not None else None
    warming_up: list[tuple[str, ScheduledRate]] = []
    causes: dict[str, list[Any]] = {"zero-gradient": [], "zero-rate": [], "rounding": []}
    for p in ctx.need(ProbeStep).parameters:
        if not (p.in_optimizer and p.in_network and p.requires_grad and not p.changed):
            continue  # only a trainable parameter of the network that the optimizer updates is expected to move
        lr = p.learning_rate
        now = _rate_of(ctx, rates, p.node)
        if lr is None and now is not None:
            lr = now.value
        if not p.grad_zero and now is not None and now.warms_up:
            warming_up.append((p.node, now))
        elif p.grad_zero:
            causes["zero-gradient"].append(p)
        elif lr == 0.0:
            causes["zero-rate"].append(p)
        else:
            causes["rounding"].append((p, lr))
    yield from _grouped(ctx, causes)
    yield from _warm_up(ctx, warming_up)


def _grouped(ctx: AuditContext, causes: dict[str, list[Any]]) -> Iterator[Finding]:
    """One finding per cause, whatever the number of parameters it left unchanged."""
    for why, found in causes.items():
        probes = [m[0] if why == "rounding" else m for m in found]
        for group in one_group(ctx, [p.node for p in probes]):
            rounding = why == "rounding"
            cause = TrainableLeftUnchanged(
                why,
                group.subject,
                group.names,
                group.cell is not None,
                group.note + (probes[0].named_as if len(probes) == 1 else ""),
                tuple(p.grad_norm for p, _ in found) if rounding else (),
                tuple(lr for _, lr in found) if rounding else (),
            )
            severity = "warning" if rounding else "error"  # rounding: the step ran; the update vanished
            yield ctx.finding(severity, group.subject, cause, group.nodes, subjects=group.names)


def _rate_of(ctx: AuditContext, rates: LearningRates | None, node: str) -> ScheduledRate | None:
    param = ctx.structure.parameters.get(node)
    schedule = rates.schedule_of(param) if rates is not None and param is not None else None
    return schedule.now() if schedule is not None else None


def _warm_up(ctx: AuditContext, members: list[tuple[str, ScheduledRate]]) -> Iterator[Finding]:
    """One info finding: the schedule is 0 at this step, so one step cannot show that these train."""
    if not members:
        return
    rate = min((r for _, r in members), key=lambda r: r.first_nonzero_step or 0)
    for group in one_group(ctx, [node for node, _ in members]):
        cause = WarmUpFromZero(
            group.subject,
            group.names,
            group.cell is not None,
            group.note,
            rate.step,
            rate.first_nonzero,
            rate.first_nonzero_step,
        )
        yield ctx.finding("info", group.subject, cause, group.graph_nodes, subjects=group.names)


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"

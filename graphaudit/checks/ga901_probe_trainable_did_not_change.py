"""GA901 probe-trainable-did-not-change."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.evidence.probe import ProbeStep
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Finding

if TYPE_CHECKING:
    from graphaudit.capture.training.lr_schedules import ScheduledRate


@register(
    "GA901",
    "probe-trainable-did-not-change",
    severity="error",
    also=("warning", "info"),
    needs=(ProbeStep,),
    uses=(OptimizerView, LearningRates),
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
        return  # every probe step overflowed and was skipped by the loss scale: GA913 says why
    rates = ctx.get(LearningRates) if ctx.optimizer is not None else None
    warming_up: list[tuple[str, ScheduledRate]] = []
    causes: dict[str, list[Any]] = {"zero-gradient": [], "zero-rate": [], "rounding": []}
    for p in ctx.need(ProbeStep).parameters:
        if not (p.in_optimizer and p.in_network and p.requires_grad and not p.changed):
            continue  # an optimizer parameter the network does not hold is GA202's
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
    for cause, members in causes.items():
        probes = [m[0] if cause == "rounding" else m for m in members]
        for group in one_group(ctx, [p.node for p in probes]):
            they, what = group.pronouns(), group.describe("parameter")
            severity = "error"
            if cause == "zero-gradient":
                why = (
                    f"{they.possessive} {'gradient is' if len(probes) == 1 else 'gradients are'} exactly zero: the "
                    f"loss does not depend on {they.object}"
                )
                fix = (
                    f"Make {group.subject} reach the loss (use the output of the branch that holds "
                    f"{they.object} in the loss: not multiplied by 0, not behind ops.stop_gradient, not left "
                    f"unused), or freeze {they.object} explicitly: requires_grad=False and leave "
                    f"{they.object} out of the optimizer."
                )
            elif cause == "zero-rate":
                why = f"{they.possessive} learning rate is 0"
                fix = f"Give {group.subject}'s parameter group a non-zero learning rate, or freeze it explicitly."
            else:
                severity = "warning"  # the step ran; the update vanished in float rounding
                norms = ", ".join(f"{_g(p.grad_norm)} at rate {_g(lr)}" for p, lr in members[:3])
                why = (
                    f"{they.possessive} gradient (norm {norms}{', ...' if len(members) > 3 else ''}) gives an "
                    "update below the float resolution of the values. A gradient that is only rounding "
                    "noise is what a bias followed by BatchNorm or LayerNorm gets: the normalisation cancels it"
                )
                fix = (
                    f"If {group.subject} is a bias right before a normalisation layer, build that layer "
                    "without it (has_bias=False); otherwise check the learning rate, loss scaling and "
                    "gradient clipping."
                )
            named = probes[0].named_as if len(probes) == 1 else ""
            yield ctx.finding(
                severity,
                group.subject,
                f"{what}{named} {they.be} in the optimizer with requires_grad=True, but one training step "
                f"left {they.object} bit-identical: {why}.",
                fix,
                group.nodes,
                subjects=group.names,
            )


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
        yield ctx.finding(
            "info",
            group.subject,
            f"One training step left {group.describe('parameter')} bit-identical because the learning-rate "
            f"schedule gives {group.pronouns().object} 0 at step {rate.step}, and "
            f"{_g(rate.first_nonzero)} from step {rate.first_nonzero_step} on: a warm-up that starts from 0. "
            "The first step of this recipe changes nothing by design, so a one-step probe cannot show "
            f"whether {group.pronouns().subject} train.",
            "Nothing to change if the warm-up is intended. To probe the update itself, probe at a step "
            "where the schedule is non-zero, or with a schedule that does not start from 0.",
            group.graph_nodes,
            subjects=group.names,
        )


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"

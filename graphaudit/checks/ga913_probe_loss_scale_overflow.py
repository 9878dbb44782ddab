"""GA913 probe-loss-scale-overflow."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe_curve import ProbeCurve
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class LossScaleSteps(Cause):
    """What the probe saw of a loss scale that skips overflowing steps: the base of GA913's causes."""

    update_cell: str | None  # the loss scale's update cell (None: a fixed scale_sense)
    wrapper: str  # the training cell that applies it
    first_scale: float | None  # the loss scale at the first step (None: not read)
    last_scale: float | None  # and at the last

    def _how(self) -> str:
        return f"{self.update_cell or 'a fixed scale_sense'} in {self.wrapper}"

    def _span(self) -> str:
        if self.first_scale is None or self.last_scale is None:
            return ""
        if self.first_scale != self.last_scale:
            return f"the loss scale went from {self.first_scale:g} to {self.last_scale:g}"
        return f"a scale of {self.first_scale:g} that does not change, so every step on this batch overflows alike"


@dataclass(frozen=True)
class LossScaleNeverSettles(LossScaleSteps):
    """So many steps overflowed that fewer than the steps asked for updated the weights.

    ``at_scale_one`` is what a step at scale 1 showed when none updated: ``"overflows"`` (the
    gradients are NaN/Inf even then) or ``"finite"``; ``None`` when some step updated.
    """

    skipped: int = 0  # the steps skipped
    steps: int = 0  # the steps run
    applied: int = 0  # the steps that updated
    requested: int = 0  # the steps asked for
    at_scale_one: str | None = None

    def message(self) -> str:
        at_one = {
            "overflows": " Even at scale 1 the gradients are NaN/Inf: the network's own computation overflows, "
            "whatever the scale.",
            "finite": " At scale 1 the gradients are finite: the scale is too large for float16.",
        }.get(self.at_scale_one or "", "")
        return (
            f"The loss scale never settles: {self.skipped} of the {self.steps} steps run overflowed and were skipped "
            f"by {self._how()} ({self._span()}), and only {self.applied} of the {self.requested} steps asked for "
            f"updated the weights. Training with this setup does not learn.{at_one}"
        )

    def fix(self) -> str:
        return (
            "Start from a scale float16 can hold (DynamicLossScaleUpdateCell(loss_scale_value=2**12, ...)) "
            "and use a dynamic scale; if the gradients overflow at every scale, find the first layer whose "
            "gradient is NaN/Inf or very large, or keep the overflowing layers (normalisations, softmax, the "
            "loss) in float32."
        )


@dataclass(frozen=True)
class LossScaleOverflowsLate(LossScaleSteps):
    """Steps that overflowed at a loss scale an earlier step had worked at: the gradients grow step to step."""

    late: tuple[int, ...] = ()  # the steps that overflowed so

    def message(self) -> str:
        return (
            f"{'Step' if len(self.late) == 1 else 'Steps'} {listing(self.late, None)} overflowed at a loss scale that had worked for an "
            f"earlier step (same batch, {self._how()}; {self._span()}): the gradients grow from step to step until "
            "float16 cannot hold them."
        )

    def fix(self) -> str:
        return (
            "Lower the learning rate or clip the gradients (ops.clip_by_global_norm): gradients that grow from "
            "step to step mean updates too large for this network."
        )


@dataclass(frozen=True)
class LossScaleFirstStepsSkipped(LossScaleSteps):
    """The first steps overflowed and were skipped while a dynamic loss scale came down; the rest updated."""

    skipped: int = 0  # the steps skipped
    settled_scale: float | None = None  # the scale of the first step that updated

    def message(self) -> str:
        was = "was" if self.skipped == 1 else "were"
        return (
            f"The first {counted(self.skipped, 'step')} overflowed and {was} skipped while {self._how()} lowered the "
            f"scale ({self._span()}); the steps after updated normally. Training wastes its first steps this way."
        )

    def fix(self) -> str:
        return f"Start the dynamic scale lower (loss_scale_value={self.settled_scale:g}) to lose no step; nothing else to do."


@register(
    "GA913",
    "probe-loss-scale-overflow",
    severity="warning",
    also=("info",),
    needs=(ProbeCurve,),
    once="one finding per probe run and way its loss scale failed",
    causes=(LossScaleNeverSettles, LossScaleOverflowsLate, LossScaleFirstStepsSkipped),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Steps skipped on overflow by the loss scale: a scale that never settles, or wasted first steps.

    What it does:
        With a ``TrainOneStepWithLossScaleCell`` (``DynamicLossScaleUpdateCell`` /
        ``DynamicLossScaleManager``, or a fixed scale that drops overflowing updates), the
        probe runs the steps as that cell does: a step whose gradients are not finite is
        skipped and the update cell lowers the scale. It reports a warning when the scale
        never settles (N steps that update are not reached within N + 32 steps, or a fixed
        scale keeps overflowing), or when a step overflows at a scale that had worked before;
        info when only the first steps were skipped while a dynamic scale came down (or a
        step overflowed right after the update cell raised the scale, which is how a dynamic
        scale probes upwards).

    Why is this bad:
        A skipped step does nothing: a scale that never settles means the weights never
        change (a fixed scale too large for float16, gradients that are NaN at any scale),
        and an overflow at a scale that worked before means the gradients grow step after step. A
        dynamic scale starting at MindSpore's default 2**24 halves at each overflow: the first
        steps of a float16 training are then wasted, by design (measured: ~9 skipped steps
        before a small float16 network's gradients fit), which is only worth knowing.

    Example:
        ```python
        manager = nn.FixedLossScaleUpdateCell(loss_scale_value=2**24)  # float16 overflows at once
        step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, loss), optimizer, scale_sense=manager)
        ```

    Use instead:
        ```python
        manager = nn.DynamicLossScaleUpdateCell(loss_scale_value=2**12, scale_factor=2, scale_window=1000)
        step = nn.TrainOneStepWithLossScaleCell(nn.WithLossCell(net, loss), optimizer, scale_sense=manager)
        ```
    """
    curve = ctx.need(ProbeCurve)
    if curve.scaling is None or not curve.scaling.skips_on_overflow:
        return
    steps = curve.steps
    skipped = [s for s in steps if not s.applied]
    if not skipped:
        return
    scales = [s.loss_scale for s in steps if s.loss_scale is not None]
    facts = (
        curve.scaling.update_cell or None,
        curve.scaling.wrapper,
        float(scales[0]) if scales else None,
        float(scales[-1]) if scales else None,
    )
    late = []  # overflows at a scale no higher than one that worked: the gradients grew
    worked: float | None = None
    for s in steps:
        if s.applied:
            worked = s.loss_scale if worked is None or s.loss_scale is None else max(worked, s.loss_scale)
        elif worked is not None and s.loss_scale is not None and s.loss_scale <= worked:
            late.append(s)
    node = (g.cell_node(""),)
    if len(curve.applied) < curve.requested:
        at_one = None
        if not curve.applied:
            broken = any(p.grad_finite is False for p in curve.parameters if p.in_optimizer)
            at_one = "overflows" if broken else "finite"
        cause = LossScaleNeverSettles(
            *facts, len(skipped), len(steps), len(curve.applied), curve.requested, at_one
        )
        yield ctx.finding("warning", "(root)", cause, node)
    elif late:
        cause = LossScaleOverflowsLate(*facts, tuple(s.index for s in late))
        yield ctx.finding("warning", "(root)", cause, node)
    else:
        settled = curve.applied[0].loss_scale
        cause = LossScaleFirstStepsSkipped(*facts, len(skipped), None if settled is None else float(settled))
        yield ctx.finding("info", "(root)", cause, node)

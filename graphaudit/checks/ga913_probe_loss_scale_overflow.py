"""GA913 probe-loss-scale-overflow."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe_curve import ProbeCurve
from graphaudit.findings import Finding


@register(
    "GA913",
    "probe-loss-scale-overflow",
    severity="warning",
    also=("info",),
    needs=(ProbeCurve,),
    once="one finding per probe run and way its loss scale failed",
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
    how = f"{curve.scaling.update_cell or 'a fixed scale_sense'} in {curve.scaling.wrapper}"
    span = ""
    if scales:
        span = (
            f"the loss scale went from {scales[0]:g} to {scales[-1]:g}"
            if scales[0] != scales[-1]
            else f"a scale of {scales[0]:g} that does not change, so every step on this batch overflows alike"
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
        at_one = ""
        if not curve.applied:
            broken = any(p.grad_finite is False for p in curve.parameters if p.in_optimizer)
            at_one = (
                " Even at scale 1 the gradients are NaN/Inf: the network's own computation overflows, "
                "whatever the scale."
                if broken
                else " At scale 1 the gradients are finite: the scale is too large for float16."
            )
        yield ctx.finding(
            "warning",
            "(root)",
            f"The loss scale never settles: {len(skipped)} of the {len(steps)} steps run overflowed and were skipped "
            f"by {how} ({span}), and only {len(curve.applied)} of the {curve.requested} steps asked for updated "
            f"the weights. Training with this setup does not learn.{at_one}",
            "Start from a scale float16 can hold (DynamicLossScaleUpdateCell(loss_scale_value=2**12, ...)) "
            "and use a dynamic scale; if the gradients overflow at every scale, find the first layer whose "
            "gradient is NaN/Inf or very large, or keep the overflowing layers (normalisations, softmax, the "
            "loss) in float32.",
            node,
        )
    elif late:
        yield ctx.finding(
            "warning",
            "(root)",
            f"Steps {', '.join(str(s.index) for s in late)} overflowed at a loss scale that had worked for an "
            f"earlier step (same batch, {how}; {span}): the gradients grow from step to step until float16 "
            "cannot hold them.",
            "Lower the learning rate or clip the gradients (ops.clip_by_global_norm): gradients that grow from "
            "step to step mean updates too large for this network.",
            node,
        )
    else:
        yield ctx.finding(
            "info",
            "(root)",
            f"The first {len(skipped)} step(s) overflowed and were skipped while {how} lowered the scale "
            f"({span}); the steps after updated normally. Training wastes its first steps this way.",
            f"Start the dynamic scale lower (loss_scale_value={curve.applied[0].loss_scale:g}) to lose no step; "
            "nothing else to do.",
            node,
        )

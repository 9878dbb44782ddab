"""GA961 loss-scale-overflow-rate."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import WatchedLossScale
from graphaudit.findings import Finding

MIN_STEPS = 20
TOO_OFTEN = 0.05  # 100x the rate of a dynamic scale raised every 2000 steps
MOSTLY = 0.5  # most updates skipped: the run barely trains


@register(
    "GA961",
    "loss-scale-overflow-rate",
    severity="error",
    also=("warning",),
    needs=(WatchedLossScale,),
    once="one finding per watched run: its loss scale's overflow rate",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Over the run, the loss-scaled gradients overflow too often: updates are skipped.

    What it does:
        Reads the overflow flag of every loss-scaled step of a watched run (20 at least) and
        reports an overflow rate above 5% (warning) or above 50% (error: most updates are
        skipped).

    Why is this bad:
        Dynamic loss scaling (Micikevicius et al. 2018, "Mixed Precision Training"; MindSpore's
        ``DynamicLossScaleManager``) raises the scale after a window of clean steps (2000 by
        default) and halves it on an overflow, so a healthy run overflows about once per
        window: 0.05% of its steps. Each overflow skips an update (or, without
        ``drop_overflow_update``, applies Inf). A rate far above means a scale that is too
        large and never comes down (a fixed scale), or float16 values that overflow whatever
        the scale (MindInsight's watchpoint "tensor overflow").

    Example:
        ```python
        manager = ms.FixedLossScaleManager(1e38, drop_overflow_update=True)
        ```

    Use instead:
        ```python
        manager = ms.DynamicLossScaleManager(init_loss_scale=2**16, scale_factor=2, scale_window=2000)
        ```
    """
    overflows = ctx.need(WatchedLossScale).overflows
    if len(overflows) < MIN_STEPS:
        return
    rate = sum(overflows) / len(overflows)
    if rate <= TOO_OFTEN:
        return
    severity = "error" if rate > MOSTLY else "warning"
    yield ctx.finding(
        severity,
        "(root)",
        f"{sum(overflows)} of {len(overflows)} loss-scaled steps overflowed ({rate:.0%}; a dynamic loss scale "
        f"overflows about once per scale window, 0.05% of steps): {'most' if rate > MOSTLY else 'many'} "
        "updates were skipped.",
        "Use DynamicLossScaleManager (or a smaller fixed scale); if it still overflows, keep the "
        "overflowing operations in float32 (amp_level='O1', or cast the loss to float32).",
        (g.cell_node(""),),
    )

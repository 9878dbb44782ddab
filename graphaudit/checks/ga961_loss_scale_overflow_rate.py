"""GA961 loss-scale-overflow-rate."""

from __future__ import annotations

import math
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
    watched = ctx.need(WatchedLossScale)
    overflows = watched.overflows
    if len(overflows) < MIN_STEPS:
        return
    rate = sum(overflows) / len(overflows)
    if rate <= TOO_OFTEN:
        return
    severity = "error" if rate > MOSTLY else "warning"
    seen, fix = _scale_story(overflows, watched.scales)
    yield ctx.finding(
        severity,
        "(root)",
        f"{sum(overflows)} of {len(overflows)} loss-scaled steps overflowed ({rate:.0%}; a dynamic loss scale "
        f"overflows about once per scale window, 0.05% of steps): {'most' if rate > MOSTLY else 'many'} "
        f"updates were skipped.{seen}",
        fix,
        (g.cell_node(""),),
    )


_FLOAT32 = "keep the overflowing operations in float32 (amp_level='O1', or cast the loss to float32)"


def _scale_story(overflows: tuple[bool, ...], scales: tuple[float | None, ...]) -> tuple[str, str]:
    """What the loss scales of the run show (a sentence for the message) and the fix that follows.

    Example:
        >>> _scale_story((True, True, False, False), (2.0**20, 2.0**19, 2.0**19, 2.0**19))[1]
        'Start the dynamic scale lower (init_loss_scale=2**19, the scale this run came down to) to lose no step.'
    """
    known = [s for s in scales if s is not None]
    if len(known) != len(overflows):  # the loop did not say its scale (w.step(loss_scale=...))
        return "", (
            f"If the scale is fixed, use a dynamic one (DynamicLossScaleManager or mindspore.amp.DynamicLossScaler); "
            f"if it is dynamic already, start it lower; if it still overflows, {_FLOAT32}."
        )
    first, lowest = known[0], min(known)
    if all(s == first for s in known):
        if first <= 1:
            return (
                f" The scale stayed at {_power(first)}: the float16 values overflow whatever the scale.",
                f"A smaller scale cannot help: {_FLOAT32}, and look for gradients that explode.",
            )
        return (
            f" The scale stayed at {_power(first)} for all {len(known)} steps: a fixed scale larger than float16 "
            "gradients can hold.",
            f"Use a dynamic scale (DynamicLossScaleManager(init_loss_scale=2**12, ...) or "
            f"mindspore.amp.DynamicLossScaler), or a fixed scale well below {_power(first)}; if it still overflows, "
            f"{_FLOAT32}.",
        )
    leading = next((i for i, overflowed in enumerate(overflows) if not overflowed), len(overflows))
    if leading >= sum(overflows) - leading:  # most overflows are the way down from too high a start
        return (
            f" The dynamic scale fell from {_power(first)} to {_power(lowest)}; {leading} of the "
            f"{sum(overflows)} overflows are the first steps, skipped while it came down.",
            f"Start the dynamic scale lower (init_loss_scale={_power(lowest)}, the scale this run came down "
            "to) to lose no step.",
        )
    return (
        f" The dynamic scale went from {_power(first)} down to {_power(lowest)} and most overflows came "
        "after clean steps: the gradients outgrow float16 at scales that had worked.",
        f"A lower starting scale will not help: {_FLOAT32}, or lower the learning rate or clip the "
        "gradients.",
    )


def _power(scale: float) -> str:
    """*scale* as ``2**k`` when it is one (loss scales are), else as a number."""
    mantissa, exponent = math.frexp(scale)
    return f"2**{exponent - 1}" if mantissa == 0.5 and exponent > 4 else f"{scale:g}"

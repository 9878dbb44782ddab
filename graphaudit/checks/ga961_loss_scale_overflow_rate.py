"""GA961 loss-scale-overflow-rate."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import WatchedLossScale
from graphaudit.findings import Cause, Finding

MIN_STEPS = 20
TOO_OFTEN = 0.05  # 100x the rate of a dynamic scale raised every 2000 steps
MOSTLY = 0.5  # most updates skipped: the run barely trains

_FLOAT32 = "keep the overflowing operations in float32 (amp_level='O1', or cast the loss to float32)"


@dataclass(frozen=True)
class LossScaleOverflows(Cause):
    """Loss-scaled steps overflowed too often, and what the run's loss scales show of why.

    ``scales`` says what they show: ``"unknown"`` (the loop did not say them), ``"stayed low"``
    (at 1 or below: float16 overflows whatever the scale), ``"fixed"`` (one scale above 1 for
    every step), ``"came down"`` (a dynamic scale whose overflows are mostly its first steps,
    skipped on the way down from too high a start), ``"outgrown"`` (most overflows came after
    clean steps).

    Example:
        >>> LossScaleOverflows(2, 4, "came down", 2.0**20, 2.0**19, 2).fix()
        'Start the dynamic scale lower (init_loss_scale=2**19, the scale this run came down to) to lose no step.'
    """

    overflowed: int  # the loss-scaled steps that overflowed
    steps: int  # the loss-scaled steps
    scales: str
    first: float | None = None  # the first step's loss scale, when known
    lowest: float | None = None  # the lowest loss scale of the run, when known
    leading: int = 0  # the overflows of the first steps, before the first clean one

    def message(self) -> str:
        rate = self.overflowed / self.steps
        return (
            f"{self.overflowed} of {self.steps} loss-scaled steps overflowed ({rate:.0%}; a dynamic loss scale "
            f"overflows about once per scale window, 0.05% of steps): {'most' if rate > MOSTLY else 'many'} "
            f"updates were skipped.{self._seen()}"
        )

    def _seen(self) -> str:
        if self.scales == "stayed low":
            return (
                f" The scale stayed at {_power(self.first)}: the float16 values overflow whatever the scale."
            )
        if self.scales == "fixed":
            return (
                f" The scale stayed at {_power(self.first)} for all {self.steps} steps: a fixed scale larger than "
                "float16 gradients can hold."
            )
        if self.scales == "came down":
            return (
                f" The dynamic scale fell from {_power(self.first)} to {_power(self.lowest)}; {self.leading} of the "
                f"{self.overflowed} overflows are the first steps, skipped while it came down."
            )
        if self.scales == "outgrown":
            return (
                f" The dynamic scale went from {_power(self.first)} down to {_power(self.lowest)} and most overflows "
                "came after clean steps: the gradients outgrow float16 at scales that had worked."
            )
        return ""

    def fix(self) -> str:
        if self.scales == "stayed low":
            return f"A smaller scale cannot help: {_FLOAT32}, and look for gradients that explode."
        if self.scales == "fixed":
            return (
                f"Use a dynamic scale (DynamicLossScaleManager(init_loss_scale=2**12, ...) or "
                f"mindspore.amp.DynamicLossScaler), or a fixed scale well below {_power(self.first)}; if it still "
                f"overflows, {_FLOAT32}."
            )
        if self.scales == "came down":
            return (
                f"Start the dynamic scale lower (init_loss_scale={_power(self.lowest)}, the scale this run came "
                "down to) to lose no step."
            )
        if self.scales == "outgrown":
            return (
                f"A lower starting scale will not help: {_FLOAT32}, or lower the learning rate or clip the "
                "gradients."
            )
        return (
            f"If the scale is fixed, use a dynamic one (DynamicLossScaleManager or mindspore.amp.DynamicLossScaler); "
            f"if it is dynamic already, start it lower; if it still overflows, {_FLOAT32}."
        )


@register(
    "GA961",
    "loss-scale-overflow-rate",
    severity="error",
    also=("warning",),
    needs=(WatchedLossScale,),
    causes=(LossScaleOverflows,),
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
    cause = _cause(overflows, watched.scales)
    yield ctx.finding(severity, "(root)", cause, (g.cell_node(""),))


def _cause(overflows: tuple[bool, ...], scales: tuple[float | None, ...]) -> LossScaleOverflows:
    """The run's overflows, and what its loss scales show (see :class:`LossScaleOverflows`).

    Example:
        >>> _cause((True, True, False, False), (2.0**20, 2.0**19, 2.0**19, 2.0**19)).scales
        'came down'
    """
    overflowed, steps = sum(overflows), len(overflows)
    known = [float(s) for s in scales if s is not None]
    if len(known) != len(overflows):  # the loop did not say its scale (w.step(loss_scale=...))
        return LossScaleOverflows(overflowed, steps, "unknown")
    first, lowest = known[0], min(known)
    if all(s == first for s in known):
        return LossScaleOverflows(overflowed, steps, "stayed low" if first <= 1 else "fixed", first, lowest)
    leading = next((i for i, skipped in enumerate(overflows) if not skipped), len(overflows))
    if leading >= overflowed - leading:  # most overflows are the way down from too high a start
        return LossScaleOverflows(overflowed, steps, "came down", first, lowest, leading)
    return LossScaleOverflows(overflowed, steps, "outgrown", first, lowest, leading)


def _power(scale: float) -> str:
    """*scale* as ``2**k`` when it is one (loss scales are), else as a number."""
    mantissa, exponent = math.frexp(scale)
    return f"2**{exponent - 1}" if mantissa == 0.5 and exponent > 4 else f"{scale:g}"

"""GA912 probe-non-finite-loss."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.curves import curve_values, curve_words
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe_curve import ProbeCurve
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class NonFiniteLoss(Cause):
    """A loss that became NaN or Inf during the probe's training steps on one batch."""

    loss: str  # the first non-finite loss: "nan", "inf" or "-inf"
    step: int  # its step
    losses: tuple[float | str, ...]  # the loss of each step (a non-finite one as its word)
    skipped: tuple[int, ...]  # the positions of the steps whose update was skipped

    def message(self) -> str:
        return (
            f"The loss became {self.loss} at step {self.step} of {len(self.losses)} on the same batch "
            f"(loss per step: {curve_words(self.losses, self.skipped)}): the updates diverged."
        )

    def fix(self) -> str:
        return (
            "Lower the learning rate, clip the gradients (ops.clip_by_global_norm), and look for an "
            "operation that leaves its domain as the weights move (log or sqrt of a value that reaches 0 or "
            "below, a division by a value that reaches 0, a float16 value above 65504: keep such layers, "
            "normalisations and the loss in float32)."
        )


@register(
    "GA912",
    "probe-non-finite-loss",
    severity="error",
    needs=(ProbeCurve,),
    causes=(NonFiniteLoss,),
    once="one finding per probe run: its one loss curve",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The loss becomes NaN or Inf within a few real steps: training diverges.

    What it does:
        Runs N training steps on the same batch (``probe=N``) and reports the first step
        whose loss is NaN or Inf when the first step's loss was finite (a loss that is not
        finite from the start is reported by GA903 with the gradients it poisons).

    Why is this bad:
        Once the loss is NaN every weight becomes NaN at the next update and training is
        lost, usually far from the cause. Within a few steps on one batch it means updates
        that overshoot without bound (a learning rate far too large, exploding gradients),
        or an operation that leaves its domain as the weights move (``log`` or ``sqrt`` of
        a value that turns negative, float16 overflow). A correct setup never gets there.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=50.0)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
        ```
    """
    curve = ctx.need(ProbeCurve)
    if not curve.steps or not math.isfinite(curve.steps[0].loss):
        return
    bad = next((s for s in curve.steps if not math.isfinite(s.loss)), None)
    if bad is None:
        return
    cause = NonFiniteLoss(str(float(bad.loss)), bad.index, *curve_values(curve.steps))
    yield ctx.finding("error", "(root)", cause, (g.cell_node(""),))

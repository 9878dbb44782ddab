"""GA951 loss-diverging."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.watch import LOSS_RISE, loss_curve
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Cause, Finding

_FIX = "Lower the learning rate (by 3-10x), or add a warm-up; clip the gradients if single steps spike."


def _went(head: float, tail: float, window: int, sigma: float) -> str:
    return (
        f"from a median of {head:.4g} over its first {window} steps to {tail:.4g} over its "
        f"last {window} (step-to-step noise {sigma:.3g})"
    )


@dataclass(frozen=True)
class LossDiverged(Cause):
    """The training loss rose beyond its noise from the start of the run to its end."""

    head: float  # the median loss over the first window of steps
    tail: float  # the median loss over the last window
    window: int  # steps in each window
    sigma: float  # the run's step-to-step noise

    def message(self) -> str:
        return f"The training loss diverged: it rose {_went(self.head, self.tail, self.window, self.sigma)}."

    def fix(self) -> str:
        return _FIX


@dataclass(frozen=True)
class LossOscillates(Cause):
    """The training loss did not fall beyond its noise, and at the end jumps by more than half of itself."""

    head: float  # the median loss over the first window of steps
    tail: float  # the median loss over the last window
    window: int  # steps in each window
    sigma: float  # the run's step-to-step noise
    sigma_tail: float  # the step-to-step noise over the last window

    def message(self) -> str:
        return (
            f"The training loss oscillates without falling: it went "
            f"{_went(self.head, self.tail, self.window, self.sigma)}; at the end it jumps by "
            f"{self.sigma_tail:.3g} from step to step."
        )

    def fix(self) -> str:
        return _FIX


@register(
    "GA951",
    "loss-diverging",
    severity="error",
    also=("warning",),
    needs=(TrainingRun,),
    causes=(LossDiverged, LossOscillates),
    once="one finding per watched run: its one loss curve",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The training loss rises or oscillates over the real run: the learning rate is too large.

    What it does:
        Compares the median loss of the last fifth of the watched run with that of the first
        fifth, against the run's own step-to-step noise (see ``docs/watch.md``): a loss that
        ended more than 10% and three standard errors above where it started is diverging
        (error); one that did not fall beyond its noise while that noise, at the end, is
        more than half the loss itself is oscillating (warning).

    Why is this bad:
        The accuracy guide (§2, learning rate too large): "学习率过大, 会导致loss震荡, 不能收敛
        到预期值" — a learning rate too large makes the loss oscillate and never converge to
        the value it should reach. Each update overshoots the minimum it aims at.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=3.0)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.05)
        ```
    """
    curve = loss_curve(ctx.need(TrainingRun).record.losses)
    if curve is None:
        return
    rise = -curve.fall
    if rise > max(3 * curve.standard_error, LOSS_RISE * abs(curve.head)):
        cause = LossDiverged(curve.head, curve.tail, curve.window, curve.sigma)
        yield ctx.finding("error", "(root)", cause, (g.cell_node(""),))
        return
    if curve.oscillates:
        cause = LossOscillates(curve.head, curve.tail, curve.window, curve.sigma, curve.sigma_tail)
        yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

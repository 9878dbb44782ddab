"""GA952 loss-flat."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.watch import loss_curve
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Cause, Finding

# and a change under 5% of the starting loss: a slow start that already fell more is not flat
SMALL_FALL = 0.05


@dataclass(frozen=True)
class LossFlat(Cause):
    """The training loss did not fall beyond its own noise from the start of the run to its end."""

    steps: int  # the steps of the run judged
    head: float  # the median loss over the first window of steps
    tail: float  # the median loss over the last window
    window: int  # steps in each window
    standard_error: float  # of the fall from head to tail

    def message(self) -> str:
        return (
            f"The training loss stayed flat over {self.steps} steps: a median of {self.head:.4g} over the "
            f"first {self.window} steps, {self.tail:.4g} over the last {self.window}, a fall within its own "
            f"noise (standard error {self.standard_error:.3g})."
        )

    def fix(self) -> str:
        return (
            "Raise the learning rate (by 10x, or run a learning-rate range test). Rule out first what no "
            "learning rate cures: weights that do not change at all (frozen, or no gradient reaches them), "
            "and labels that carry no signal (shuffled apart from their inputs, read from the wrong column, "
            "random; a cross-entropy then stays near log(number of classes), the loss of a uniform guess)."
        )


@register(
    "GA952",
    "loss-flat",
    severity="warning",
    needs=(TrainingRun,),
    causes=(LossFlat,),
    defers_to={"GA951": "a loss that oscillates is not flat: the rate is too large, not too small"},
    once="one finding per watched run: its one loss curve",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The training loss did not fall beyond its own noise over the whole run: the learning rate is too small.

    What it does:
        At the end of a watched run of 20 steps or more, compares the median loss of its
        last fifth with that of its first fifth; when the fall is within three standard
        errors of the run's own step-to-step noise (``docs/watch.md``), and the change (a
        fall or a rise) is under 5% of the starting loss, and the loss is not oscillating (GA951), the loss stayed flat from
        the start.

    Why is this bad:
        The accuracy guide (§2, learning rate too small): "学习率过小, 会导致loss收敛慢" — a
        learning rate too small makes the loss converge slowly; the run spends its compute
        without learning. (A frozen network, GA960, or a loss that cannot reach the weights
        look the same; so do labels that carry no signal, the guide's §1.1 "wrong labels": random
        labels leave nothing to learn at any rate.)

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=1e-7)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.05)
        ```
    """
    record = ctx.need(TrainingRun).record
    curve = loss_curve(record.losses)
    if curve is None or not record.finished or len(curve.losses) < len(record.losses):
        return
    if abs(curve.fall) >= 3 * curve.standard_error or abs(curve.fall) > SMALL_FALL * abs(curve.head):
        return  # it fell, or rose: not flat (a learning rate too small does not make a loss rise)
    cause = LossFlat(len(curve.losses), curve.head, curve.tail, curve.window, curve.standard_error)
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

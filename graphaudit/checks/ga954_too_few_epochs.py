"""GA954 too-few-epochs."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun, WatchedValidation
from graphaudit.findings import Cause, Finding

STILL_FALLING = 0.03  # a relative fall per evaluation (and over the last epoch) above this is still learning
LAST = 2  # the last this many evaluations all fell
# ... and the last evaluation gained this share of all the loss fell since the first step. A
# classifier of separable data keeps falling a few percent an epoch for ever (the cross-entropy
# goes as 1/t) long after what is left to gain is nothing: wine at 0.0097, 3.7% an epoch
# (measured, docs/watch.md), gained 0.03% of its fall from 1.1; a run stopped early gains 10-30%.
GAINING = 0.05


@dataclass(frozen=True)
class TooFewEpochs(Cause):
    """At the last epoch the training and validation losses were both still falling."""

    last_epoch: int
    validation: tuple[float, ...]  # the validation losses of the last evaluations, in order
    train_before: float  # the training loss (its mean over the epoch) of the epoch before the last
    train_last: float  # ... and of the last epoch

    def message(self) -> str:
        return (
            f"Too few epochs: at the last epoch ({self.last_epoch}) both losses were still falling — validation "
            f"{' -> '.join(f'{v:.4g}' for v in self.validation)} over the last {len(self.validation)} "
            f"evaluations, training {self.train_before:.4g} -> {self.train_last:.4g} over the last epoch: the "
            "model underfits."
        )

    def fix(self) -> str:
        return (
            "Train for more epochs (until the validation loss stops improving), or raise the learning rate "
            "if each epoch gains little."
        )


@register(
    "GA954",
    "too-few-epochs",
    severity="warning",
    needs=(TrainingRun, WatchedValidation),
    causes=(TooFewEpochs,),
    once="one finding per watched run: its training and validation curves",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Underfitting: the training stopped while the training and validation losses were both still falling.

    What it does:
        At the end of a watched run, when each of the last 2 evaluations lowered the
        validation loss by more than 3% and the training loss (its mean per epoch) fell by
        more than 3% over the last epoch, while the last evaluation still gained 5% or more of
        all the loss fell since the first step, it reports "too few epochs". (A classifier
        of separable data keeps falling a few percent an epoch long after nothing is left to
        gain: its last falls are then a sliver of the whole.)

    Why is this bad:
        The accuracy guide (§2, too few epochs): "epoch过小, 模型未训练到最优解就停止了训练, 容
        易欠拟合" — stopped before it reached its best, the model underfits. Both curves
        still falling mean more epochs would still help.

    Example:
        ```python
        model.fit(3, train, valid_dataset=valid, callbacks=[graphaudit.Watch()])
        ```

    Use instead:
        ```python
        model.fit(30, train, valid_dataset=valid, callbacks=[graphaudit.Watch()])
        ```
    """
    record = ctx.need(TrainingRun).record
    points = ctx.need(WatchedValidation).points
    epochs = record.epoch_losses()
    if not record.finished or len(points) < LAST + 1 or len(epochs) < 2:
        return
    recent = [loss for _, _, loss in points[-(LAST + 1) :]]
    valid_falls = all(b < a * (1 - STILL_FALLING) for a, b in zip(recent, recent[1:]))
    (_, before), (last_epoch, last) = epochs[-2], epochs[-1]
    if not (valid_falls and last < before * (1 - STILL_FALLING)):
        return
    start = next((loss for loss in record.losses if math.isfinite(loss)), recent[0])
    if recent[-2] - recent[-1] < GAINING * (start - recent[-1]):
        return  # still falling, but by a sliver of what it gained: more epochs have little left to win
    cause = TooFewEpochs(last_epoch, tuple(float(v) for v in recent), float(before), float(last))
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

"""GA953 too-many-epochs."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun, WatchedValidation
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted

PATIENCE = 3  # evaluations without improvement (Prechelt 1998's UP_3; Keras' EarlyStopping patience)
WORSE = 0.01  # each of them this much above the best
# Without an accuracy to read, the last evaluation this much above the best: healthy MLPs'
# cross-entropy crept up 4% above its best at a constant accuracy as they grew confident
# (measured, docs/watch.md), while memorising runs climb far past it.
RISEN = 0.10
ACCURACY_NOISE = 2.0  # standard errors of the accuracy (binomial, over the validation samples)


@dataclass(frozen=True)
class TooManyEpochs(Cause):
    """The validation loss rose for several evaluations after its best while the training loss kept falling."""

    best_epoch: int  # the epoch of the lowest validation loss
    best_loss: float  # that validation loss
    evaluations: int  # the evaluations after it
    last_loss: float  # the validation loss at the last evaluation
    train_at_best: float  # the training loss (its mean over the epoch) at the best epoch
    train_at_last: float  # ... and at the last
    accuracy_at_best: float | None = None  # the validation accuracy at the best epoch, when read
    accuracy_at_last: float | None = None  # ... and at the last evaluation
    accuracy_samples: int | None = None  # the validation samples the accuracy is over

    def message(self) -> str:
        fell = ""
        if self.accuracy_at_best is not None and self.accuracy_at_last is not None:
            fell = (
                f", and the validation accuracy fell from {self.accuracy_at_best:.1%} to {self.accuracy_at_last:.1%} "
                f"({self.accuracy_samples} samples)"
            )
        return (
            f"Too many epochs: best at epoch {self.best_epoch} (validation loss {self.best_loss:.4g}); in the "
            f"{self.evaluations} evaluations since, the validation loss rose to {self.last_loss:.4g} while the "
            f"training loss fell from {self.train_at_best:.4g} to {self.train_at_last:.4g}{fell}: the model overfits."
        )

    def fix(self) -> str:
        return (
            f"Train for about {counted(self.best_epoch, 'epoch')}, keep the checkpoint of epoch {self.best_epoch} "
            "(ModelCheckpoint), or stop early; more data, augmentation or regularisation (weight decay, "
            "dropout) delay it."
        )


@register(
    "GA953",
    "too-many-epochs",
    severity="warning",
    needs=(TrainingRun, WatchedValidation),
    causes=(TooManyEpochs,),
    once="one finding per watched run: its training and validation curves",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Overfitting: the validation loss rose for several evaluations while the training loss kept falling.

    What it does:
        Finds the evaluation with the lowest validation loss; when the last 3 evaluations or
        more came after it, each more than 1% above it, while the training loss (its mean over
        each epoch) fell from that epoch to the last, and the overfitting shows beyond a
        classifier growing confident, it reports "too many epochs: best at epoch E". A
        classifier's validation accuracy (read when the outputs are class scores, or from
        ``Model.eval``'s ``accuracy`` metric) shows it when it fell after epoch E by more
        than 2 standard errors; with no accuracy to read, the last validation loss is 10%
        above the best. A healthy classifier's cross-entropy creeps up at a constant
        accuracy as it grows confident (measured on real data: up to +51% after the best
        epoch, at 96-98% accuracy throughout): it would classify no better at epoch E.

    Why is this bad:
        The accuracy guide (§2, too many epochs): "epoch过大, 模型训练时间过长, 容易在训练集上过
        拟合, 在测试集上达不到最优的效果" — trained too long, the model fits the training set
        and does worse on unseen data. The weights of epoch E generalised better than the
        last ones. Three evaluations without improvement is Prechelt's (1998, "Early
        Stopping — But When?") UP-3 stopping rule and the usual early-stopping patience.

    Example:
        ```python
        model.fit(200, train, valid_dataset=valid, callbacks=[graphaudit.Watch()])  # best at epoch 20
        ```

    Use instead:
        ```python
        model.fit(25, train, valid_dataset=valid, callbacks=[ms.train.ModelCheckpoint(...)])  # or early stopping
        ```
    """
    validation = ctx.need(WatchedValidation)
    points = validation.points
    train = dict(ctx.need(TrainingRun).record.epoch_losses())
    best = min(range(len(points)), key=lambda i: points[i][2])
    after = points[best + 1 :]
    best_epoch, _, best_loss = points[best]
    if len(after) < PATIENCE or not all(loss > best_loss * (1 + WORSE) for _, _, loss in after):
        return
    last_epoch = points[-1][0]
    if best_epoch not in train or last_epoch not in train or not train[last_epoch] < train[best_epoch]:
        return
    accuracy = _accuracy_after(validation.accuracy, best)
    if accuracy is None and points[-1][2] <= best_loss * (1 + RISEN):
        return
    if accuracy is not None and not accuracy.fell:
        # The accuracy held: the loss rises as the model grows confident (on what it gets right,
        # and on its few mistakes), and the weights of the best epoch would classify no better.
        return
    cause = TooManyEpochs(
        best_epoch,
        float(best_loss),
        len(after),
        float(points[-1][2]),
        float(train[best_epoch]),
        float(train[last_epoch]),
        float(accuracy.then) if accuracy is not None else None,
        float(accuracy.last) if accuracy is not None else None,
        int(accuracy.samples) if accuracy is not None else None,
    )
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))


@dataclass(frozen=True)
class _Accuracy:
    """The validation accuracy at the best epoch and its mean over the evaluations after it."""

    then: float
    later: float
    last: float
    samples: int

    @property
    def fell(self) -> bool:
        """By more than its binomial noise (at least one sample's worth)."""
        noise = max(math.sqrt(self.then * (1 - self.then) / self.samples), 1 / self.samples)
        return self.then - self.later > ACCURACY_NOISE * noise


def _accuracy_after(accuracy: tuple[tuple[float, int] | None, ...], best: int) -> _Accuracy | None:
    """The accuracy from evaluation *best* on, when every one of those evaluations had one."""
    known = [a for a in accuracy[best:] if a is not None]
    if len(accuracy) <= best + 1 or len(known) != len(accuracy) - best:
        return None
    later = [value for value, _ in known[1:]]
    return _Accuracy(known[0][0], sum(later) / len(later), later[-1], known[0][1])

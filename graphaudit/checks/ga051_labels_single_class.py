"""GA051 labels-single-class."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.input_labels import loss_target, read_label
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding

#: Fewer labels than this say nothing about the classes of the data.
MIN_ROWS = 4
#: One class alone is a warning when balanced classes would give such a batch less often than this.
WARN_CHANCE = 1e-7


@dataclass(frozen=True)
class LabelsSingleClass(Cause):
    """Every label of the batch given to audit() is of one class."""

    rows: int  # the labels judged
    what: str  # what each label is: "class index", "one-hot class" or "binary target"
    label: float  # the one class they hold
    classes: int  # the classes the network predicts

    def message(self) -> str:
        collapsed = (
            " Every label is 0: class indices scaled like pixels (y / 255) or rounded down before the cast collapse "
            "to 0."
            if self.label == 0 and self.what != "binary target"
            else ""
        )
        return (
            f"All {self.rows} labels of the batch given to audit() are the same {self.what}, {self.label:g}, while "
            f"the network predicts {self.classes} classes: a batch of one class teaches the network to answer that "
            f"class whatever the input.{collapsed}"
        )

    def fix(self) -> str:
        return (
            "Check that the training data is shuffled (dataset.shuffle(...), shuffle=True) and that the labels are "
            "the real ones (scale the images, not the labels); audit with a representative batch."
        )


@register(
    "GA051",
    "labels-single-class",
    severity="warning",
    also=("info",),
    needs=(LossTrace, GivenLabel),
    once="one finding per label given to audit()",
    causes=(LabelsSingleClass,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Every label of the batch given to audit() is the same class.

    What it does:
        Reads the class of each row of the label given with the traced batch — a class index
        (``(N,)`` labels of a cross-entropy over ``(N, C)`` logits), a one-hot row, or a 0/1
        target of a one-unit binary head — and reports when all of them are one class. It is a
        warning when, with balanced classes, such a batch would come by chance less than once
        in 10^7 batches (``C^(1-n)`` for ``n`` labels of ``C`` classes: 8 labels of 10 classes,
        16 of 3) and there are at least 3 classes; info otherwise (an imbalanced binary
        problem gives such batches honestly). When every label is 0 the message says how that
        happens: class indices divided like pixels (``y / 255``) or rounded down. Fewer than
        4 labels, per-pixel labels and multi-label targets are not judged.

    Why is this bad:
        A batch of one class teaches the network to predict that class whatever the input: the
        loss goes down while nothing is learned. It is what an unshuffled dataset sorted by class
        gives, or labels overwritten by a constant (``y = np.zeros(...)`` left from a test), or
        labels collapsed by preprocessing: a Keras-style ``y = (y / 255).astype("int32")``
        turns every class index into 0.
        Theia (arXiv:2412.05775) checks the network against the training data's labels; the
        single-class batch is graphaudit's version of it on the batch given to ``audit()``.

    Example:
        ```python
        x, y = next(iter(train_sorted_by_class))      # y = [0, 0, 0, ..., 0]
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
        ```

    Use instead:
        ```python
        train = train.shuffle(buffer_size=len(train))  # every batch mixes the classes
        ```
    """
    reading = read_label(ctx)
    target = loss_target(ctx)
    if reading is None or target is None or reading.rows < MIN_ROWS:
        return
    values, classes = reading.values, reading.classes or 0
    if target.family in ("ce", "nll") and reading.role == "index" and values.ndim == 1 and reading.integral:
        rows = values if target.ignore_index is None else values[values != target.ignore_index]
        what = "class index"
    elif (
        reading.role == "dense"
        and values.ndim == 2
        and reading.format.kind == "one-hot"
        and values.shape[1] >= 2
    ):
        rows, classes, what = values.argmax(axis=1), int(values.shape[1]), "one-hot class"
    elif (
        target.family == "bce"
        and reading.integral
        and values.size == reading.rows
        and set(np.unique(values)) <= {0, 1}
    ):
        rows, classes, what = values.reshape(-1), 2, "binary target"
    else:
        return
    distinct = np.unique(rows)
    if len(rows) < MIN_ROWS or len(distinct) != 1 or classes < 2:
        return
    chance = float(classes) ** (1 - len(rows))  # balanced classes: the first label's class, n - 1 times again
    severity = "warning" if chance <= WARN_CHANCE and classes >= 3 else "info"
    cause = LabelsSingleClass(len(rows), what, float(distinct[0]), int(classes))
    yield ctx.finding(severity, "label", cause, ["output:0"])

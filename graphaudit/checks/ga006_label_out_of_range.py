"""GA006 label-out-of-range."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.evidence.dataset_labels import ClassCount, LabelCounts
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class OneHotWidthNotClasses(Cause):
    """One-hot labels whose width is not the number of classes the network predicts."""

    column: str
    width: int
    classes: int
    classes_from: str  # where the number of classes was read

    def message(self) -> str:
        return (
            f"The labels in {self.column!r} are one-hot rows of width {self.width}, but the network predicts "
            f"{self.classes} classes ({self.classes_from})."
        )

    def fix(self) -> str:
        return f"Build the head with {self.width} outputs, or one-hot encode with num_classes={self.classes}."


@dataclass(frozen=True)
class LabelsOutsideClasses(Cause):
    """Class labels outside [0, classes): the network can never predict them."""

    column: str
    low: int  # the smallest label counted
    high: int  # the largest
    counted_on: str  # what the labels were counted on
    classes: int
    classes_from: str  # where the number of classes was read
    outside: tuple[int, ...]  # the labels outside [0, classes), in order
    rows: tuple[int, ...]  # how many rows hold each of them

    def message(self) -> str:
        shown = listing(f"{label} ({counted(n, 'row')})" for label, n in zip(self.outside, self.rows))
        return (
            f"The labels in {self.column!r} go from {self.low} to {self.high} (counted on {self.counted_on}), but "
            f"the network predicts {self.classes} classes ({self.classes_from}): the labels {shown} are outside "
            f"[0, {self.classes}) and can never be predicted."
        )

    def fix(self) -> str:
        return (
            f"Give the network as many outputs as there are classes ({self.high + 1} for labels 0..{self.high}), or "
            "fix the labels (an extra class folder, labels counted from 1, a class_indexing that skips numbers)."
        )


@register(
    "GA006",
    "label-out-of-range",
    severity="error",
    needs=(
        LabelCounts,
        ClassCount,
    ),
    uses=(DataSample,),
    once="one finding per label column: every label outside the classes is counted in it",
    causes=(
        OneHotWidthNotClasses,
        LabelsOutsideClasses,
    ),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Labels the network cannot produce: a class index outside [0, num_classes), or one-hot rows of another width.

    What it does:
        Compares the training labels (their class counts: over the whole label column when
        that is cheap, over the sample otherwise, and the message says which) with the number
        of classes the network predicts: ``num_classes=`` when given, else the width of the
        network's traced output ``(batch, classes)`` (``inputs=``; not for a regression loss
        such as ``MSELoss``). It reports an error for class indices below 0 or from
        ``num_classes`` up, and for one-hot labels whose width is not ``num_classes``.

    Why is this bad:
        MindSpore's accuracy guide (§1.1, "wrong labels"): label errors are particularly
        destructive to training. A label the output layer has no unit for can never be
        predicted: on some devices the loss reads past the logits, elsewhere the step fails
        only once such a label comes up, often after hours of training (an ``ImageFolderDataset``
        with an extra folder, labels counted from 1, a head built for the wrong dataset).

    Example:
        ```python
        net = resnet18(num_classes=10)
        train = ds.ImageFolderDataset("train/")  # 12 class folders: labels 0..11
        ```

    Use instead:
        ```python
        classes = train.num_classes()
        net = resnet18(num_classes=classes)
        ```
    """
    counts, classes = ctx.need(LabelCounts), ctx.need(ClassCount)
    subject = column_subject("train", counts.column)
    width = counts.one_hot_width
    if width and width != classes.classes:
        cause = OneHotWidthNotClasses(counts.column, int(width), int(classes.classes), classes.where)
        yield ctx.finding("error", subject, cause, anchors(ctx, label=True))
        return
    outside = {label: n for label, n in counts.counts.items() if label < 0 or label >= classes.classes}
    if not outside:
        return
    low, high = min(counts.counts), max(counts.counts)
    labels = sorted(outside.items())
    cause = LabelsOutsideClasses(
        counts.column,
        int(low),
        int(high),
        counts.where,
        int(classes.classes),
        classes.where,
        tuple(int(label) for label, _ in labels),
        tuple(int(n) for _, n in labels),
    )
    yield ctx.finding("error", subject, cause, anchors(ctx, label=True))

"""GA006 label-out-of-range."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.evidence.dataset_labels import ClassCount, LabelCounts
from graphaudit.findings import Finding
from graphaudit.graph.pipeline import column_subject


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
        yield ctx.finding(
            "error",
            subject,
            f"The labels in {counts.column!r} are one-hot rows of width {width}, but the network predicts "
            f"{classes.classes} classes ({classes.where}).",
            f"Build the head with {width} outputs, or one-hot encode with num_classes={classes.classes}.",
            anchors(ctx, label=True),
        )
        return
    outside = {label: n for label, n in counts.counts.items() if label < 0 or label >= classes.classes}
    if not outside:
        return
    shown = ", ".join(f"{label} ({n} rows)" for label, n in sorted(outside.items())[:6])
    more = f" and {len(outside) - 6} more" if len(outside) > 6 else ""
    low, high = min(counts.counts), max(counts.counts)
    yield ctx.finding(
        "error",
        subject,
        f"The labels in {counts.column!r} go from {low} to {high} (counted on {counts.where}), but the network "
        f"predicts {classes.classes} classes ({classes.where}): the labels {shown}{more} are outside "
        f"[0, {classes.classes}) and can never be predicted.",
        f"Give the network as many outputs as there are classes ({high + 1} for labels 0..{high}), or fix the "
        "labels (an extra class folder, labels counted from 1, a class_indexing that skips numbers).",
        anchors(ctx, label=True),
    )

"""GA007 labels-mismatch-loss."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_stats import LabelFormat, label_format
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.evidence.dataset_labels import REGRESSION_LOSSES, LossChoice
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Finding
from graphaudit.graph.pipeline import column_subject

_INDEX_LOSSES = frozenset({"NLLLoss", "FocalLoss"})
_BINARY_LOSSES = frozenset({"BCEWithLogitsLoss", "BCELoss"})


def _output_shape(ctx: AuditContext) -> tuple[int, ...] | None:
    traced = ctx.get(TracedPass)
    if traced is None:
        return None
    output = traced.output[0] if isinstance(traced.output, (tuple, list)) else traced.output
    return tuple(int(d) for d in getattr(output, "shape", ()))


def _problem(
    loss: object, found: LabelFormat, labels_shape: tuple[int, ...], output: tuple[int, ...] | None
) -> str:
    """What is wrong with labels of *found* format for *loss*, or ``""``."""
    name = type(loss).__name__
    one_hot = found.kind in ("one-hot", "probabilities")
    if name == "SoftmaxCrossEntropyWithLogits":
        if getattr(loss, "sparse", False) and one_hot:
            return f"{name}(sparse=True) expects class indices, but the labels are {found.kind} rows of width {found.width}"
        if not getattr(loss, "sparse", False) and found.kind == "index":
            return f"{name}(sparse=False) expects one-hot rows, but the labels are class indices"
    if name in _INDEX_LOSSES and one_hot:
        return f"{name} expects class indices, but the labels are {found.kind} rows of width {found.width}"
    if name == "CrossEntropyLoss" and one_hot and found.dtype.startswith(("int", "uint", "bool")):
        return f"{name} reads {found.kind} rows as class probabilities, which must be float, but they are {found.dtype}"
    if name in _BINARY_LOSSES and found.kind == "index" and found.high > 1:
        return f"{name} expects 0/1 targets of the output's shape, but the labels are class indices up to {found.high:g}"
    if name not in REGRESSION_LOSSES | _BINARY_LOSSES or output is None or len(labels_shape) != 1:
        return ""
    if len(output) == 2 and output[1] == 1 and output[0] == labels_shape[0]:
        effect = (
            "requires targets of the output's shape and fails at the first step"
            if name in _BINARY_LOSSES
            else f"broadcasts them to [{output[0]}, {output[0]}], comparing every output with every label"
        )
        return f"the network's output has shape {list(output)} and the labels {list(labels_shape)}: {name} {effect}"
    return ""


@register(
    "GA007",
    "labels-mismatch-loss",
    severity="error",
    needs=(
        LossChoice,
        DataSample,
    ),
    uses=(TracedPass,),
    once="one finding per loss: the labels are judged once against it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Labels in the wrong form for the loss: one-hot rows for an index loss, indices for a one-hot loss, or a broadcast.

    What it does:
        Reads the format of the sampled labels (class indices, one-hot rows, probabilities,
        continuous values) and the loss the network is trained with, and reports an error
        when they do not fit: one-hot rows for ``SoftmaxCrossEntropyWithLogits(sparse=True)``
        or ``NLLLoss``; class indices for ``SoftmaxCrossEntropyWithLogits(sparse=False)``;
        integer one-hot rows for ``CrossEntropyLoss`` (which takes float probabilities);
        class indices above 1 for ``BCEWithLogitsLoss`` / ``BCELoss``; and, when the output is
        traced, ``(N,)`` labels against an ``(N, 1)`` output for a loss that broadcasts them.

    Why is this bad:
        MindSpore's accuracy guide (§1.1, wrong labels, and §3, API misuse): the loss reads
        the labels as something they are not. Some pairings fail at the first step, after the
        pipeline and the network were built; others train silently on nonsense, measured on
        MindSpore 2.10: ``NLLLoss`` given one-hot rows returns a loss without any error, and
        ``MSELoss`` with an ``(N, 1)`` output and ``(N,)`` labels returns an ``(N, N)`` loss
        that compares every prediction with every label.

    Example:
        ```python
        train = ds.ImageFolderDataset("train/").map(transforms.OneHot(10), "label")
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
        ```

    Use instead:
        ```python
        train = ds.ImageFolderDataset("train/")  # class indices
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        ```
    """
    sampled, loss = ctx.need(DataSample), ctx.need(LossChoice)
    if sampled.label_column is None:
        return
    labels = sampled.sample.column(sampled.label_column)
    if labels is None or labels.dtype.kind not in "biuf" or not labels.size:
        return
    found = label_format(labels)
    batch_shape = tuple(sampled.sample.columns[sampled.label_column][0].shape)  # one batch, as the loss sees
    problem = _problem(loss.loss_fn, found, batch_shape, _output_shape(ctx))
    if not problem:
        return
    subject = column_subject("train", sampled.label_column)
    yield ctx.finding(
        "error",
        subject,
        f"The labels in {sampled.label_column!r} do not fit the loss: {problem} (measured on "
        f"{sampled.sample.describe()}).",
        "Make the labels and the loss agree: class indices (int32) for sparse=True / NLLLoss / CrossEntropyLoss, "
        "float one-hot rows for sparse=False; labels of the output's shape for BCE and regression losses "
        "(reshape them to (N, 1) or squeeze the output).",
        anchors(ctx, label=True),
        subjects=[subject, loss.name],
    )

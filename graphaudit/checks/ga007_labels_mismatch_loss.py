"""GA007 labels-mismatch-loss."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.data_stats import LabelFormat, label_format
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample
from graphaudit.evidence.dataset_labels import REGRESSION_LOSSES, LossChoice
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.graph.pipeline import column_subject

_INDEX_LOSSES = frozenset({"NLLLoss", "FocalLoss"})
_BINARY_LOSSES = frozenset({"BCEWithLogitsLoss", "BCELoss"})


def _output_shape(ctx: AuditContext) -> tuple[int, ...] | None:
    traced = ctx.get(TracedPass)
    if traced is None:
        return None
    output = traced.output[0] if isinstance(traced.output, (tuple, list)) else traced.output
    return tuple(int(d) for d in getattr(output, "shape", ()))


@dataclass(frozen=True)
class LabelsDoNotFitLoss(Cause):
    """Sampled labels of a format or shape the loss does not take.

    *mismatch* says how: ``"wants indices"`` (one-hot or probability rows given to a loss of
    class indices), ``"wants one-hot"`` (indices given to ``sparse=False``), ``"integer
    probabilities"`` (integer rows read as probabilities), ``"wants binary"`` (class indices
    above 1 given to a binary loss), ``"broadcasts"`` (one label per row against an ``(N, 1)``
    output).
    """

    column: str
    loss: str  # the loss's class
    sparse: bool | None  # its sparse= (SoftmaxCrossEntropyWithLogits), None for other losses
    mismatch: str
    label_kind: str  # what the labels hold: label_format()'s kind
    width: int  # the labels' row width
    dtype: str  # the labels' dtype
    high: float  # the largest label
    output: tuple[int, ...] | None  # the network's output shape, when traced
    labels: tuple[int, ...]  # the shape of one batch of labels
    sample: str  # what was measured (DataSample's description)

    def message(self) -> str:
        return f"The labels in {self.column!r} do not fit the loss: {self._problem()} (measured on {self.sample})."

    def _problem(self) -> str:
        name = self.loss if self.sparse is None else f"{self.loss}(sparse={self.sparse})"
        if self.mismatch == "wants indices":
            return f"{name} expects class indices, but the labels are {self.label_kind} rows of width {self.width}"
        if self.mismatch == "wants one-hot":
            return f"{name} expects one-hot rows, but the labels are class indices"
        if self.mismatch == "integer probabilities":
            return (
                f"{name} reads {self.label_kind} rows as class probabilities, which must be float, but they are "
                f"{self.dtype}"
            )
        if self.mismatch == "wants binary":
            return (
                f"{name} expects 0/1 targets of the output's shape, but the labels are class indices up to "
                f"{self.high:g}"
            )
        output = list(self.output or ())
        effect = (
            "requires targets of the output's shape and fails at the first step"
            if self.loss in _BINARY_LOSSES
            else f"broadcasts them to [{output[0]}, {output[0]}], comparing every output with every label"
        )
        return f"the network's output has shape {output} and the labels {list(self.labels)}: {name} {effect}"

    def fix(self) -> str:
        return (
            "Make the labels and the loss agree: class indices (int32) for sparse=True / NLLLoss / CrossEntropyLoss, "
            "float one-hot rows for sparse=False; labels of the output's shape for BCE and regression losses "
            "(reshape them to (N, 1) or squeeze the output)."
        )


def _problem(
    loss: object, found: LabelFormat, labels_shape: tuple[int, ...], output: tuple[int, ...] | None
) -> str:
    """How labels of *found* format do not fit *loss* (a :class:`LabelsDoNotFitLoss` mismatch), or ``""``."""
    name = type(loss).__name__
    one_hot = found.kind in ("one-hot", "probabilities")
    if name == "SoftmaxCrossEntropyWithLogits":
        if getattr(loss, "sparse", False) and one_hot:
            return "wants indices"
        if not getattr(loss, "sparse", False) and found.kind == "index":
            return "wants one-hot"
    if name in _INDEX_LOSSES and one_hot:
        return "wants indices"
    if name == "CrossEntropyLoss" and one_hot and found.dtype.startswith(("int", "uint", "bool")):
        return "integer probabilities"
    if name in _BINARY_LOSSES and found.kind == "index" and found.high > 1:
        return "wants binary"
    if name not in REGRESSION_LOSSES | _BINARY_LOSSES or output is None or len(labels_shape) != 1:
        return ""
    if len(output) == 2 and output[1] == 1 and output[0] == labels_shape[0]:
        return "broadcasts"
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
    causes=(LabelsDoNotFitLoss,),
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
    output = _output_shape(ctx)
    mismatch = _problem(loss.loss_fn, found, batch_shape, output)
    if not mismatch:
        return
    subject = column_subject("train", sampled.label_column)
    name = type(loss.loss_fn).__name__
    cause = LabelsDoNotFitLoss(
        sampled.label_column,
        name,
        bool(getattr(loss.loss_fn, "sparse", False)) if name == "SoftmaxCrossEntropyWithLogits" else None,
        mismatch,
        found.kind,
        int(found.width),
        found.dtype,
        float(found.high),
        output,
        tuple(int(d) for d in batch_shape),
        sampled.sample.describe(),
    )
    yield ctx.finding("error", subject, cause, anchors(ctx, label=True), subjects=[subject, loss.name])

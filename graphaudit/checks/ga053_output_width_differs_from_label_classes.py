"""GA053 output-width-differs-from-label-classes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.input_labels import ROW_FORMATS, loss_target, read_label
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class OutputWidthNotLabelClasses(Cause):
    """Label rows of one width (classes) against an output of another."""

    label_kind: str  # what the rows hold: "one-hot", "probabilities"...
    width: int  # the labels' row width: their classes
    classes: int  # the values the network outputs per row
    output: tuple[int, ...]  # the output's shape
    loss: str  # the loss's name

    def message(self) -> str:
        return (
            f"The labels are {self.label_kind} rows of width {self.width} ({self.width} classes), but the network "
            f"outputs {self.classes} value{'s' if self.classes != 1 else ''} per row (shape {list(self.output)}), "
            f"compared by {self.loss}."
        )

    def fix(self) -> str:
        return (
            f"Make the head's output width the number of classes ({self.width}), or build the labels for "
            f"{self.classes} classes."
        )


@register(
    "GA053",
    "output-width-differs-from-label-classes",
    severity="error",
    needs=(LossTrace, GivenLabel),
    once="one finding per label given to audit(), against the network's one output width",
    causes=(OutputWidthNotLabelClasses,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The labels imply K classes (one-hot rows of width K), the network outputs C ≠ K values per row.

    What it does:
        Reads the label given with the traced batch: when it is ``(N, K)`` rows of one-hot,
        multi-hot or probability targets, and the network's first output is ``(N, C)`` with
        ``C ≠ K``, reports an error naming both widths (for MindSpore's losses; a custom loss cell
        may slice its input). Labels and outputs of other layouts
        (class indices, per-pixel masks) are left to GA052 and GA054.

    Why is this bad:
        The head was built for another number of classes than the data has (``nn.Dense(64,
        10)`` for a 5-class dataset, a ``num_classes`` left at its default). Element-wise losses
        broadcast a one-unit output against the K columns, so training runs and learns one
        number for every class; the others raise a shape error at the first step, after the
        data pipeline and compilation. NeuraLint (TOSEM'21) and Theia (arXiv:2412.05775) both
        check that the last layer's width matches the number of classes.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 10)])
        y = Tensor(np.eye(5, dtype=np.float32)[classes])   # 5 classes, one-hot
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 5)])
        ```
    """
    reading = read_label(ctx)
    target = loss_target(ctx)
    if reading is None or target is None or reading.role is not None or not target.builtin:
        return
    values, output = reading.values, reading.output_shape
    if values.ndim != 2 or len(output) != 2 or reading.format.kind not in ROW_FORMATS:
        return
    width, classes = int(values.shape[1]), int(output[1])
    if width == classes or width < 2:
        return
    cause = OutputWidthNotLabelClasses(
        reading.format.kind, width, classes, tuple(int(d) for d in output), target.name
    )
    yield ctx.finding("error", "label", cause, ["output:0"])

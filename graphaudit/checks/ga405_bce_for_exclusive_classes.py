"""GA405 bce-for-exclusive-classes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.input_labels import loss_target, read_label
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

#: One-hot rows of at least this many classes are mutually exclusive classes.
MIN_CLASSES = 3
#: From this many one-hot rows the batch says the classes are exclusive (fewer: info).
WARN_ROWS = 8


def _fix(loss: str) -> str:
    return (
        f"Train mutually exclusive classes with nn.CrossEntropyLoss() on the raw logits (labels: class indices), "
        f"instead of {loss}; keep a binary cross-entropy only for multi-label targets."
    )


@dataclass(frozen=True)
class ClassIndicesGivenToBce(Cause):
    """A binary cross-entropy whose label holds class indices (2 or more), not probabilities in [0, 1]."""

    loss: str  # the loss cell's class name
    classes: tuple[int, ...]  # the distinct class indices of the label, in order

    def message(self) -> str:
        return (
            f"{self.loss} is a binary cross-entropy, whose targets are probabilities in [0, 1], but the label holds "
            f"class indices ({listing(self.classes)}): the loss is unbounded below for a target above 1."
        )

    def fix(self) -> str:
        return _fix(self.loss)


@dataclass(frozen=True)
class OneHotGivenToBce(Cause):
    """A binary cross-entropy whose label rows are all one-hot: mutually exclusive classes."""

    loss: str  # the loss cell's class name
    rows: int  # the label's rows, every one of them one-hot
    classes: int  # the width of the rows

    def message(self) -> str:
        return (
            f"{self.loss} is a binary cross-entropy (one independent yes/no per class), but every one of the "
            f"{self.rows} label rows is one-hot over {self.classes} classes: the classes are mutually exclusive, which "
            "a cross-entropy over a softmax expresses and a binary cross-entropy does not."
        )

    def fix(self) -> str:
        return _fix(self.loss) + " If the task really is multi-label, allow this finding."


@register(
    "GA405",
    "bce-for-exclusive-classes",
    severity="warning",
    also=("error", "info"),
    needs=(LossTrace, GivenLabel),
    causes=(ClassIndicesGivenToBce, OneHotGivenToBce),
    defers_to={
        "GA406": "a network ending in a softmax: the fix is the same, and GA406 says the cause more clearly"
    },
    once="one finding per loss: the loss and the labels it is given",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A binary cross-entropy trained on mutually exclusive classes, where a cross-entropy is meant.

    What it does:
        For MindSpore's binary cross-entropies (``nn.BCEWithLogitsLoss``, ``nn.BCELoss``; a
        custom cell such as a sigmoid focal loss may one-hot its class indices itself and is
        not judged), reads the label given with the traced batch:

        - class indices of 2 or more (``[0, 3, 1, 2]``): an error — the targets of a binary
          cross-entropy are probabilities in [0, 1];
        - one-hot rows (every row has exactly one 1) of 3 classes or more: a warning with at
          least 8 rows, info with fewer (a multi-label batch can have one positive per row by
          chance).

        A network ending in a softmax is GA406's (the fix is the same, the cause is clearer).

    Why is this bad:
        A binary cross-entropy trains one independent yes/no question per class: nothing tells
        the network that exactly one answer is yes, the scores do not compete, and the argmax of
        independent sigmoids is no calibrated choice between classes. With class indices as targets the loss is unbounded below (``-y·log p`` with
        ``y = 3``) and training diverges. Loss/label mismatches are rules of NeuraLint
        (TOSEM'21, its loss-function rules), Theia (arXiv:2412.05775) and UMLAUT (CHI'21).

    Example:
        ```python
        y = Tensor(np.eye(10, dtype=np.float32)[digits])     # one class per sample
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.BCEWithLogitsLoss())
        ```

    Use instead:
        ```python
        y = Tensor(digits.astype(np.int32))                   # class indices
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
        ```
    """
    reading = read_label(ctx)
    target = loss_target(ctx)
    if reading is None or target is None or target.family != "bce" or not target.builtin:
        return  # a custom loss (a sigmoid focal loss) may one-hot its class indices itself
    values = reading.values
    if reading.integral and values.size and values.min() >= 0 and values.max() >= 2:
        classes = tuple(sorted({int(v) for v in values.reshape(-1)}))
        yield ctx.finding("error", target.name, ClassIndicesGivenToBce(target.name, classes), ["output:0"])
        return
    if reading.role != "dense" or values.ndim != 2 or reading.format.kind != "one-hot":
        return
    width = int(values.shape[1])
    if width < MIN_CLASSES:
        return
    severity = "warning" if reading.rows >= WARN_ROWS else "info"
    cause = OneHotGivenToBce(target.name, int(reading.rows), width)
    yield ctx.finding(severity, target.name, cause, ["output:0"])

"""GA405 bce-for-exclusive-classes."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.input_labels import loss_target, read_label
from graphaudit.checks._shared.lossflow import pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding

#: One-hot rows of at least this many classes are mutually exclusive classes.
MIN_CLASSES = 3
#: From this many one-hot rows the batch says the classes are exclusive (fewer: info).
WARN_ROWS = 8


@register(
    "GA405",
    "bce-for-exclusive-classes",
    severity="warning",
    also=("error", "info"),
    needs=(LossTrace, GivenLabel),
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
    if any(p.activation == "softmax" and p.source == "output:0" for p in pairings(ctx)):
        return  # GA406
    values = reading.values
    fix = (
        f"Train mutually exclusive classes with nn.CrossEntropyLoss() on the raw logits (labels: class indices), "
        f"instead of {target.name}; keep a binary cross-entropy only for multi-label targets."
    )
    if reading.integral and values.size and values.min() >= 0 and values.max() >= 2:
        classes = sorted({int(v) for v in values.reshape(-1)})
        shown = ", ".join(str(c) for c in classes[:6]) + (", ..." if len(classes) > 6 else "")
        yield ctx.finding(
            "error",
            target.name,
            f"{target.name} is a binary cross-entropy, whose targets are probabilities in [0, 1], but the label holds "
            f"class indices ({shown}): the loss is unbounded below for a target above 1.",
            fix,
            ["output:0"],
        )
        return
    if reading.role != "dense" or values.ndim != 2 or reading.format.kind != "one-hot":
        return
    width = int(values.shape[1])
    if width < MIN_CLASSES:
        return
    severity = "warning" if reading.rows >= WARN_ROWS else "info"
    yield ctx.finding(
        severity,
        target.name,
        f"{target.name} is a binary cross-entropy (one independent yes/no per class), but every one of the "
        f"{reading.rows} label rows is one-hot over {width} classes: the classes are mutually exclusive, which a "
        "cross-entropy over a softmax expresses and a binary cross-entropy does not.",
        fix + " If the task really is multi-label, allow this finding.",
        ["output:0"],
    )

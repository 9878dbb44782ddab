"""GA060 loss-rejects-label."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss_label import LossOnLabel
from graphaudit.findings import Cause, Finding
from graphaudit.text import shape_text

_ELEMENTWISE = frozenset(
    {
        "MSELoss",
        "L1Loss",
        "SmoothL1Loss",
        "HuberLoss",
        "RMSELoss",
        "MAELoss",
        "BCELoss",
        "BCEWithLogitsLoss",
        "KLDivLoss",
        "SoftMarginLoss",
        "MultiLabelSoftMarginLoss",
    }
)


def _builtin(loss_fn: Any) -> str | None:
    for cls in type(loss_fn).__mro__:
        if (getattr(cls, "__module__", "") or "").startswith("mindspore."):
            return cls.__name__
    return None


def _shape(shape: tuple[int, ...]) -> str:
    return shape_text(shape)


def wanted(loss_fn: Any, output: tuple[int, ...]) -> str:
    """What *loss_fn* takes as its label next to an output of shape *output*, in words.

    Example:
        >>> from mindspore import nn
        >>> wanted(nn.SoftmaxCrossEntropyWithLogits(sparse=True), (8, 3))
        'class indices: an integer tensor of shape (8,), one index in [0, 3) per sample'
        >>> wanted(nn.MSELoss(), (8, 3))
        'targets of the output shape (8, 3): one float per output value'
    """
    return _wanted(_builtin(loss_fn), type(loss_fn).__name__, bool(getattr(loss_fn, "sparse", False)), output)


def _wanted(name: str | None, loss_class: str, sparse: bool, output: tuple[int, ...]) -> str:
    """What a loss of class *loss_class* (*name*: the MindSpore class it derives from) takes, in words."""
    if len(output) >= 2:
        indices_last = _shape(output[:-1])
        indices_axis1 = _shape(output[:1] + output[2:])
    else:
        indices_last = indices_axis1 = _shape(output[:1])
    classes = output[-1] if name == "SoftmaxCrossEntropyWithLogits" or len(output) < 2 else output[1]
    index = f"one index in [0, {classes}) per sample"
    if name == "SoftmaxCrossEntropyWithLogits":
        if sparse:
            return f"class indices: an integer tensor of shape {indices_last}, {index}"
        return f"class probabilities (one-hot rows): a float tensor of the output shape {_shape(output)}"
    if name in ("CrossEntropyLoss", "NLLLoss"):
        alternative = (
            f", or class probabilities of the output shape {_shape(output)} (floats)"
            if name == "CrossEntropyLoss"
            else ""
        )
        return f"class indices: an integer tensor of shape {indices_axis1}, {index}{alternative}"
    if name in _ELEMENTWISE:
        return f"targets of the output shape {_shape(output)}: one float per output value"
    return f"the label {loss_class}.construct compares with an output of shape {_shape(output)}"


@dataclass(frozen=True)
class LossRejectsLabel(Cause):
    """A loss that raised when run on the label given to audit()."""

    loss: str  # the loss's name
    loss_class: str  # its class
    builtin: str | None  # the MindSpore loss class it is or derives from (None: a loss of its own)
    sparse: bool  # its sparse= (SoftmaxCrossEntropyWithLogits)
    label_dtype: str
    label_shape: tuple[int, ...]
    output_shape: tuple[int, ...]
    refused: str  # what MindSpore raised

    def message(self) -> str:
        return (
            f"{self.loss} cannot run on the label given: a {self.label_dtype} tensor of shape "
            f"{_shape(self.label_shape)} next to an output of shape {_shape(self.output_shape)}; "
            f"{self._what_differs()}. {self.loss} takes {self._wanted()}. MindSpore raised {self.refused}"
        )

    def fix(self) -> str:
        return (
            f"Give the loss the label it takes ({self._wanted()}), or a loss made for "
            "this label (nn.SoftmaxCrossEntropyWithLogits(sparse=False) for one-hot rows)."
        )

    def _wanted(self) -> str:
        return _wanted(self.builtin, self.loss_class, self.sparse, self.output_shape)

    def _what_differs(self) -> str:
        label, output = self.label_shape, self.output_shape
        if label and output and label[0] != output[0]:
            return f"the label has {label[0]} rows for a batch of {output[0]}"
        name = self.builtin
        sparse = name in ("CrossEntropyLoss", "NLLLoss") or (
            name == "SoftmaxCrossEntropyWithLogits" and self.sparse
        )
        if sparse and "float" in self.label_dtype.lower() and len(label) == len(output):
            return "the label holds float rows (one-hot or probabilities) where class indices are wanted"
        if len(label) == len(output) == 2 and label[1] >= 2 and label[1] != output[1]:
            return (
                f"the label holds rows of {label[1]} classes and the network outputs {output[1]} values per row "
                "(a head built for another number of classes)"
            )
        if label != output:
            return f"the label's shape {_shape(label)} is not the output's {_shape(output)}"
        return "the label's values or dtype are not what the loss takes"


@register(
    "GA060",
    "loss-rejects-label",
    severity="error",
    needs=(LossOnLabel,),
    once="one finding per loss: what it takes, against the label given",
    causes=(LossRejectsLabel,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The loss raises on the label given with the batch: training would stop at its first step.

    What it does:
        Runs the loss given to the audit on the network's output and the label given with
        the traced batch, as the training step does. When MindSpore raises, reports an error
        that says which label (its dtype and shape), which output, and what the loss takes,
        in words, with MindSpore's own message. Everything that reads the loss (the
        loss-pairing checks GA4xx, the label rules GA051-GA054) is then NOT RUN: nothing the
        loss would do was seen.

    Why is this bad:
        The label is not what the loss was written for: one-hot rows given to a sparse
        cross-entropy, a label batch cut to another length than the inputs' (5 labels for 8
        samples: a dataset whose columns were batched apart), a ``(N,)`` target for an
        ``(N, 3)`` regression output. The first training step fails, after the data pipeline
        and the compilation; in a larger script the label that reaches the loss may not be the
        one its author thinks. An audit that said "OK" here would say it without having
        looked.

    Example:
        ```python
        y = Tensor(np.eye(3, dtype=np.float32)[classes])        # one-hot rows, (8, 3)
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True)  # takes class indices, (8,)
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=loss_fn)
        ```

    Use instead:
        ```python
        y = Tensor(classes.astype(np.int32))                    # (8,) class indices
        # or keep the one-hot rows: nn.SoftmaxCrossEntropyWithLogits(sparse=False)
        ```
    """
    ran = ctx.need(LossOnLabel)
    if ran.refused is None:
        return
    cause = LossRejectsLabel(
        ran.name,
        type(ran.loss_fn).__name__,
        _builtin(ran.loss_fn),
        bool(getattr(ran.loss_fn, "sparse", False)),
        ran.label_dtype,
        tuple(int(d) for d in ran.label_shape),
        tuple(int(d) for d in ran.output_shape),
        ran.refused,
    )
    yield ctx.finding("error", "label", cause, ["output:0"] if "output:0" in ctx.graph else [])

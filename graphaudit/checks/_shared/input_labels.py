"""The label given to ``audit()`` next to what the loss does with it (shared by GA051-GA054, GA405-GA409).

:func:`loss_target` says which family the loss belongs to — ``"bce"`` (``BCEWithLogitsLoss``,
``BCELoss`` or a custom cell built on them), ``"ce"`` (``CrossEntropyLoss``,
``SoftmaxCrossEntropyWithLogits``), ``"nll"``, or ``"regression"`` (``MSELoss``, ``L1Loss``,
``SmoothL1Loss``, ``HuberLoss``...) — from :func:`~graphaudit.checks._shared.lossflow.loss_expectation`
and the loss's class, with the axis that holds the classes and the ignored index.

:func:`read_label` puts the label beside the network's first output: its shape, whether the
label holds one class index per output row (``role="index"``: the output's shape without the
class axis) or one target per output value (``role="dense"``: the output's shape), and its
format as :func:`~graphaudit.checks._shared.data_stats.label_format` reads it (the one
implementation of label formats, shared with the data-pipeline checks).

Example:
    >>> import numpy as np
    >>> read_role((8, 10), (8,), 1), read_role((8, 10), (8, 10), 1), read_role((8, 10), (4,), 1)
    ('index', 'dense', None)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np

from graphaudit import graph as g
from graphaudit.checks._shared.data_stats import LabelFormat, label_format
from graphaudit.checks._shared.lossflow import loss_expectation

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = ["ROW_FORMATS", "LabelReading", "LossTarget", "loss_target", "read_label", "read_role"]

#: Element-wise regression losses of ``mindspore.nn`` / ``mindspore.mint.nn``, by class name.
REGRESSION_LOSSES: Final = frozenset(
    {"MSELoss", "L1Loss", "SmoothL1Loss", "HuberLoss", "RMSELoss", "MAELoss"}
)
#: Label formats that hold one row of class targets per sample.
ROW_FORMATS: Final = ("one-hot", "multi-hot", "probabilities")
_FAMILIES: Final = {
    "logits-sigmoid": "bce",
    "probabilities": "bce",
    "logits-softmax": "ce",
    "log-probabilities": "nll",
}


@dataclass(frozen=True)
class LossTarget:
    """What family a loss belongs to, and where it keeps the classes."""

    family: str  # "bce", "ce", "nll", "regression" or "divergence" (KLDivLoss)
    expects: str | None  # the lossflow expectation of a classification loss
    name: str  # the loss cell's class name: the subject of the loss findings
    evidence: str
    class_axis: int  # the output axis holding the classes (ce, nll)
    ignore_index: int | None  # a class index the loss skips
    builtin: bool = True  # a MindSpore loss class (its class axis is documented), not a custom cell


def _builtin_name(loss_fn: Any, names: frozenset[str]) -> str | None:
    for cls in type(loss_fn).__mro__:
        if cls.__name__ in names and (getattr(cls, "__module__", "") or "").startswith("mindspore."):
            return cls.__name__
    return None


def _loss_target(ctx: AuditContext) -> LossTarget | None:
    from graphaudit.evidence.loss import LossTrace

    loss = ctx.need(LossTrace)
    if tuple(loss.logits[:1]) != ("output:0",) or "output:0" not in ctx.graph:
        return None  # the loss is given head outputs or a node inside: not the plain (output, label) pair
    expects, evidence = loss_expectation(loss.loss_fn, loss.graph)
    family = _FAMILIES.get(expects or "")
    if family is None and _builtin_name(loss.loss_fn, REGRESSION_LOSSES) is not None:
        family, evidence = (
            "regression",
            f"nn.{type(loss.loss_fn).__name__} compares the output with targets of its shape",
        )
    if family is None and _builtin_name(loss.loss_fn, frozenset({"KLDivLoss"})) is not None:
        family, evidence = (
            "divergence",
            "nn.KLDivLoss compares the output with target probabilities of its shape",
        )
    if family is None:
        return None
    axis = -1 if _builtin_name(loss.loss_fn, frozenset({"SoftmaxCrossEntropyWithLogits"})) else 1
    ignore = getattr(loss.loss_fn, "ignore_index", None)
    ignore = ignore if isinstance(ignore, int) and not isinstance(ignore, bool) else None
    builtin = (type(loss.loss_fn).__module__ or "").startswith("mindspore.")
    return LossTarget(family, expects, loss.name, evidence, axis, ignore, builtin)


def loss_target(ctx: AuditContext) -> LossTarget | None:
    """The loss's family and class axis, or ``None`` for a loss none of these rules judge (once per audit)."""
    return ctx.shared(_loss_target)


def read_role(output: tuple[int, ...], label: tuple[int, ...], class_axis: int) -> str | None:
    """``"index"``, ``"dense"`` or ``None``: how a label of shape *label* lines up with the output."""
    if label == output:
        return "dense"
    if len(output) >= 2 and len(label) == len(output) - 1:
        axis = class_axis % len(output)
        if label == output[:axis] + output[axis + 1 :]:
            return "index"
    return None


@dataclass(frozen=True)
class LabelReading:
    """The label beside the output: shapes, role, format, and the output's class count."""

    values: np.ndarray
    output_shape: tuple[int, ...]
    role: str | None
    format: LabelFormat
    classes: int | None  # the output's size along the class axis (index labels) or its last axis
    integral: bool

    @property
    def rows(self) -> int:
        return int(self.values.shape[0]) if self.values.ndim else 1

    def distinct(self) -> list[float]:
        """The distinct label values (for class indices), sorted."""
        return sorted({float(v) for v in np.unique(self.values)})


def _read_label(ctx: AuditContext) -> LabelReading | None:
    from graphaudit.evidence.label import GivenLabel

    target = loss_target(ctx)
    given = ctx.get(GivenLabel)
    if target is None or given is None:
        return None
    output = g.shape_of(ctx.graph.nodes["output:0"])
    values = np.asarray(given.values)
    if not output or values.shape[:1] != output[:1]:
        return None  # not one label row per output row: a layout these rules do not read
    role = read_role(
        tuple(output), tuple(values.shape), target.class_axis if target.family in ("ce", "nll") else -1
    )
    if role == "index":
        classes: int | None = output[target.class_axis % len(output)]
    else:
        classes = output[-1] if len(output) >= 2 else None
    finite = values[np.isfinite(values)] if values.dtype.kind == "f" else values
    integral = values.dtype.kind in "biu" or (bool(finite.size) and bool((finite == np.round(finite)).all()))
    return LabelReading(values, tuple(output), role, label_format(values), classes, integral)


def read_label(ctx: AuditContext) -> LabelReading | None:
    """The label of the traced batch beside the network's output, or ``None`` (once per audit)."""
    return ctx.shared(_read_label)

"""GA052 label-outside-output-range."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.activations import OUTPUT_RANGE, activation_name
from graphaudit.checks._shared.input_labels import loss_target, read_label
from graphaudit.checks._shared.outputs import describe_node, output_activation
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding

_TOLERANCE = 1e-6


@dataclass(frozen=True)
class ClassIndexOutsideOutput(Cause):
    """Class-index labels outside [0, classes) of the output a cross-entropy compares them with."""

    loss: str  # the loss's name
    classes: int  # the output's classes
    output: tuple[int, ...]  # the output's shape
    outside: int  # the labels outside [0, classes) (or not whole)
    ignore_index: int | None  # the loss's ignore_index, whose labels are excepted
    low: float  # the smallest label judged
    high: float  # the largest
    from_one: bool  # they run from 1 to the number of classes: numbered from 1

    def message(self) -> str:
        hint = (
            " The labels run from 1 to the number of classes: they look numbered from 1."
            if self.from_one
            else ""
        )
        ignored = f" (ignore_index={self.ignore_index} excepted)" if self.ignore_index is not None else ""
        return (
            f"The labels are class indices for {self.loss}, whose output has {self.classes} classes (shape "
            f"{list(self.output)}), but {self.outside} of them lie{'s' if self.outside == 1 else ''} outside "
            f"[0, {self.classes}){ignored}: they range from {self.low:g} to {self.high:g}.{hint}"
        )

    def fix(self) -> str:
        return f"Give class indices from 0 to {self.classes - 1}, or widen the network's output to the number of classes."


@dataclass(frozen=True)
class TargetsOutsideProbabilities(Cause):
    """Dense targets outside [0, 1] given to a cross-entropy that reads them as probabilities."""

    loss: str  # the loss's name
    low: float  # the smallest target
    high: float  # the largest

    def message(self) -> str:
        return (
            f"{self.loss} compares the output with targets in [0, 1] (probabilities), but the label ranges from "
            f"{self.low:g} to {self.high:g}."
        )

    def fix(self) -> str:
        return (
            "Give targets in [0, 1]: map -1/1 labels to 0/1, divide 0-255 masks by 255, or use a loss meant for "
            "those values."
        )


@dataclass(frozen=True)
class TargetsOutsideActivation(Cause):
    """Regression targets outside the range of the output's last activation."""

    activation: str  # the activation's name
    node: str  # the node that makes the output, in words
    lower: float | None  # the activation's range (None: unbounded that way)
    upper: float | None
    loss: str  # the loss's name
    low: float  # the smallest target
    high: float  # the largest

    def _range(self) -> str:
        lower = "-∞" if self.lower is None else f"{self.lower:g}"
        upper = "∞" if self.upper is None else f"{self.upper:g}"
        return f"[{lower}, {upper}]"

    def message(self) -> str:
        return (
            f"The network's output is made by a {self.activation} ({self.node}), which can only produce values in "
            f"{self._range()}, but the {self.loss} targets range from {self.low:g} to {self.high:g}: the loss can "
            "never reach its minimum, and the activation saturates trying."
        )

    def fix(self) -> str:
        return f"Scale the targets into {self._range()}, or remove the {self.activation} so that the output is unbounded."


@register(
    "GA052",
    "label-outside-output-range",
    severity="error",
    also=("warning",),
    needs=(LossTrace, GivenLabel),
    once="one finding per label given to audit(): every value outside the output's range is counted in it",
    causes=(
        ClassIndexOutsideOutput,
        TargetsOutsideProbabilities,
        TargetsOutsideActivation,
    ),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Label values the network's output cannot produce: a class index past the output's width, a BCE target outside [0, 1].

    What it does:
        Compares the label given with the traced batch with what a MindSpore loss
        (``nn.CrossEntropyLoss``, ``nn.BCEWithLogitsLoss``, ``nn.MSELoss``...) can compare it
        with; a custom loss cell, which may remap its label, is not judged:

        - a cross-entropy or NLL loss with class indices: every index must lie in ``[0, C)``
          for ``C`` the output's size along the class axis (``ignore_index`` excepted); an
          error otherwise, with a note when the labels look 1-based (from 1 to ``C``);
        - a cross-entropy with probability targets, or a binary cross-entropy: every target
          must lie in ``[0, 1]``; an error otherwise (class indices of 2 and more given to a
          binary cross-entropy are GA405's);
        - a regression loss (``MSELoss``, ``L1Loss``, ``SmoothL1Loss``...) after a bounded
          output activation: the targets must lie in the activation's range (sigmoid and
          softmax ``[0, 1]``, tanh ``[-1, 1]``, ReLU ``[0, ∞)``, ReLU6 ``[0, 6]``); a warning
          otherwise.
        A one-unit head under a softmax cross-entropy is GA408's cause, class indices given to a
        binary cross-entropy GA405's.

    Why is this bad:
        A class index past the output's width makes MindSpore's CPU kernels raise at the first
        step, or read past the row (a segmentation fault on 2.10, seen once), and other backends
        may read garbage; a negative index other than
        ``ignore_index`` is taken from the end (``-1`` is the last class) without a word (on
        MindSpore 2.10, ``CrossEntropyLoss`` gives a finite loss for label ``-1``). A BCE
        target of 255 or -1 makes the loss unbounded below, and a regression target a
        sigmoid cannot reach keeps the loss from ever reaching its minimum while the
        activation saturates. Theia (arXiv:2412.05775) judges the last layer against the
        labels' range; NeuraLint (TOSEM'21) has rules on the last layer's activation and the
        loss.

    Example:
        ```python
        y[unlabelled] = -1                                 # meant: "no class"
        graphaudit.audit(net, optimizer, inputs=(x,), label=Tensor(y), loss_fn=nn.CrossEntropyLoss())
        ```

    Use instead:
        ```python
        loss_fn = nn.CrossEntropyLoss(ignore_index=-1)     # or mark them with the default, -100
        ```

        Labels numbered from 1 are shifted to start at 0 (``y - 1``).
    """
    reading = read_label(ctx)
    target = loss_target(ctx)
    if reading is None or target is None or not target.builtin:
        return  # a custom loss cell may remap its label (indices from 1, -1 for "none"): not judged
    values = reading.values.astype(np.float64)
    values = values[np.isfinite(values)]
    if not values.size:
        return
    low, high = float(values.min()), float(values.max())
    nodes = ["output:0"]
    if target.family in ("ce", "nll") and reading.role == "index":
        classes = reading.classes or 0
        if classes < 2:
            return  # fewer than two classes: no range of indices to hold the labels to
        kept = values if target.ignore_index is None else values[values != target.ignore_index]
        bad = kept[(kept < 0) | (kept >= classes) | (kept != np.round(kept))]
        if not bad.size:
            return
        cause = ClassIndexOutsideOutput(
            target.name,
            int(classes),
            tuple(int(d) for d in reading.output_shape),
            int(bad.size),
            None if target.ignore_index is None else int(target.ignore_index),
            float(kept.min()),
            float(kept.max()),
            bool(kept.size and kept.min() >= 1 and kept.max() == classes),
        )
        yield ctx.finding("error", "label", cause, nodes)
        return
    if target.family in ("ce", "bce") and reading.role == "dense":
        if low >= -_TOLERANCE and high <= 1 + _TOLERANCE:
            return
        if target.family == "bce" and reading.integral and low >= 0:
            return  # whole numbers from 0 under a binary cross-entropy: class indices, not probabilities out of range
        yield ctx.finding("error", "label", TargetsOutsideProbabilities(target.name, low, high), nodes)
        return
    if target.family != "regression" or reading.role != "dense":
        return
    _, node = output_activation(ctx.graph)
    name = activation_name(ctx.graph, node)
    bounds = OUTPUT_RANGE.get(name or "")
    if bounds is None or node is None:
        return
    lower, upper = bounds
    below = lower is not None and low < lower - _TOLERANCE
    above = upper is not None and high > upper + _TOLERANCE
    if not (below or above):
        return
    cause = TargetsOutsideActivation(
        str(name),
        describe_node(ctx.graph, node),
        None if lower is None else float(lower),
        None if upper is None else float(upper),
        target.name,
        low,
        high,
    )
    yield ctx.finding("warning", "label", cause, [node, *nodes])

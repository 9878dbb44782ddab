"""GA052 label-outside-output-range."""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

from graphaudit.checks import register
from graphaudit.checks._shared.activations import OUTPUT_RANGE, activation_name
from graphaudit.checks._shared.input_labels import loss_target, read_label
from graphaudit.checks._shared.outputs import describe_node, output_activation
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.label import GivenLabel
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding

_TOLERANCE = 1e-6


@register(
    "GA052",
    "label-outside-output-range",
    severity="error",
    also=("warning",),
    needs=(LossTrace, GivenLabel),
    once="one finding per label given to audit(): every value outside the output's range is counted in it",
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
            return  # a one-unit head under a softmax cross-entropy: GA408
        kept = values if target.ignore_index is None else values[values != target.ignore_index]
        bad = kept[(kept < 0) | (kept >= classes) | (kept != np.round(kept))]
        if not bad.size:
            return
        hint = ""
        if kept.size and kept.min() >= 1 and kept.max() == classes:
            hint = " The labels run from 1 to the number of classes: they look numbered from 1."
        ignored = f" (ignore_index={target.ignore_index} excepted)" if target.ignore_index is not None else ""
        yield ctx.finding(
            "error",
            "label",
            f"The labels are class indices for {target.name}, whose output has {classes} classes (shape "
            f"{list(reading.output_shape)}), but {bad.size} of them lie{'s' if bad.size == 1 else ''} outside [0, {classes}){ignored}: they range "
            f"from {kept.min():g} to {kept.max():g}.{hint}",
            f"Give class indices from 0 to {classes - 1}, or widen the network's output to the number of classes.",
            nodes,
        )
        return
    if target.family in ("ce", "bce") and reading.role == "dense":
        if low >= -_TOLERANCE and high <= 1 + _TOLERANCE:
            return
        if target.family == "bce" and reading.integral and low >= 0:
            return  # class indices given to a binary cross-entropy: GA405
        yield ctx.finding(
            "error",
            "label",
            f"{target.name} compares the output with targets in [0, 1] (probabilities), but the label ranges from "
            f"{low:g} to {high:g}.",
            "Give targets in [0, 1]: map -1/1 labels to 0/1, divide 0-255 masks by 255, or use a loss meant for "
            "those values.",
            nodes,
        )
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
    shown = f"[{'-∞' if lower is None else f'{lower:g}'}, {'∞' if upper is None else f'{upper:g}'}]"
    yield ctx.finding(
        "warning",
        "label",
        f"The network's output is made by a {name} ({describe_node(ctx.graph, node)}), which can only produce values in "
        f"{shown}, but the {target.name} targets range from {low:g} to {high:g}: the loss can never reach its "
        "minimum, and the activation saturates trying.",
        f"Scale the targets into {shown}, or remove the {name} so that the output is unbounded.",
        [node, *nodes],
    )

"""GA408 one-unit-head-with-cross-entropy."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.input_labels import loss_target
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class OneClassOutput(Cause):
    """A softmax cross-entropy (or NLL loss) over an output with one class."""

    loss: str  # the loss cell's class name
    shape: tuple[int, ...]  # the output's shape

    def message(self) -> str:
        return (
            f"{self.loss} normalises the output over its classes, but the output has one class (shape "
            f"{list(self.shape)}): the softmax of one score is 1, so the loss is the same for every input and "
            "nothing trains."
        )

    def fix(self) -> str:
        return (
            "For a binary task keep the one unit and use nn.BCEWithLogitsLoss() with float 0/1 targets, or give the "
            "head two units and keep the cross-entropy with class indices 0/1."
        )


@register(
    "GA408",
    "one-unit-head-with-cross-entropy",
    severity="error",
    needs=(LossTrace,),
    causes=(OneClassOutput,),
    once="one finding per loss: the loss and the one-unit output it is given",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A softmax cross-entropy over an output with one class: the loss is 0 whatever the network does.

    What it does:
        Reports an error when the loss is a softmax cross-entropy or an NLL loss
        (``nn.CrossEntropyLoss``, ``nn.SoftmaxCrossEntropyWithLogits``, ``nn.NLLLoss``, or a
        custom cell built on them) and the network's first output has size 1 along the class
        axis (axis 1; the last axis for ``SoftmaxCrossEntropyWithLogits``): a ``Dense(..., 1)``
        head, typically a binary classifier. For a custom loss cell, which may reshape its input,
        only a 2-D ``(N, 1)`` output is judged.

    Why is this bad:
        The softmax of a single score is 1, its log 0: the loss is 0 (or constant) for every
        input and every label, and no gradient reaches the network. Training "converges" at
        once and predicts nothing. NeuraLint (TOSEM'21) and Theia (arXiv:2412.05775) both check
        the last layer's width against the loss and the classes.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 1)])
        graphaudit.audit(net, optimizer, inputs=(x,), label=y01, loss_fn=nn.CrossEntropyLoss())
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 1)])
        loss_fn = nn.BCEWithLogitsLoss()           # one unit: a binary cross-entropy on float 0/1 targets
        # or two units with nn.CrossEntropyLoss() and class indices 0/1
        ```
    """
    target = loss_target(ctx)
    if target is None or target.family not in ("ce", "nll"):
        return
    shape = g.shape_of(ctx.graph.nodes["output:0"])
    if len(shape) < 2 or shape[target.class_axis % len(shape)] != 1:
        return
    if not target.builtin and len(shape) != 2:
        return  # a custom loss may move the class axis (a reshape of (N, L, V) logits): only (N, 1) is sure
    cause = OneClassOutput(target.name, tuple(int(d) for d in shape))
    yield ctx.finding("error", target.name, cause, ["output:0"])

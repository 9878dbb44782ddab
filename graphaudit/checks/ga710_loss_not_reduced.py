"""GA710 loss-not-reduced."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Cause, Finding
from graphaudit.graph.queries import shape_of


@dataclass(frozen=True)
class LossNotReduced(Cause):
    """A loss that returns one value per sample, whose sum the training step differentiates."""

    loss: str  # the loss's name
    reduction: str | None  # its reduction= attribute, when it has one
    shape: tuple[int, ...]  # the shape of what it returns

    def message(self) -> str:
        how = f' (reduction="{self.reduction}")' if self.reduction is not None else ""
        return (
            f"The loss {self.loss}{how} returns {list(self.shape)} values, not one: the training step differentiates "
            f"their sum, so each update is {self.shape[0]} (the batch size) times what the mean would give, and the "
            "effective learning rate changes with the batch size."
        )

    def fix(self) -> str:
        return f'Reduce the loss: {self.loss}(..., reduction="mean"), or .mean() in a wrapping cell.'


def _shape(graph: Any) -> list[int] | None:
    if graph is None or "output:0" not in graph:
        return None
    try:
        return list(shape_of(graph.nodes["output:0"]))
    except (KeyError, TypeError, ValueError):  # no shape recorded, or not a list of numbers
        return None


@register(
    "GA710",
    "loss-not-reduced",
    severity="warning",
    needs=(LossTrace, OptimizerView),
    causes=(LossNotReduced,),
    once="one finding per loss: its unreduced output",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A loss that returns one value per sample (``reduction="none"``) trained on directly: the gradient is the sum.

    What it does:
        Reads the shape of the loss the training step differentiates (traced on the
        network's output) and reports a loss with more than one element when an optimizer
        is given. ``nn.SoftmaxCrossEntropyWithLogits`` (``reduction="none"`` by default)
        and ``nn.SmoothL1Loss`` (the same) are the usual cases.

    Why is this bad:
        ``TrainOneStepCell`` and ``value_and_grad`` differentiate a non-scalar loss with a
        sensitivity of ones: the gradient of its *sum*. Every update is batch-size times
        larger than with the mean, and the effective learning rate changes with the batch
        size (measured on MindSpore 2.10: ``reduction="none"`` moves a Dense layer 8.0 times
        more than ``"mean"`` on a batch of 8). PyTorch's ``CrossEntropyLoss`` defaults to
        the mean, so ported code keeps its learning rate and diverges. A sum can be wanted:
        a warning.

    Example:
        ```python
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True)  # reduction="none"
        ```

    Use instead:
        ```python
        loss_fn = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
        ```
    """
    loss = ctx.need(LossTrace)
    shape = _shape(ctx.graph if loss.inside else loss.graph)
    if shape is None or not shape:
        return
    count = 1
    for dim in shape:
        count *= int(dim)
    if count <= 1:
        return
    reduction = getattr(loss.loss_fn, "reduction", None)
    node = ctx.structure.cell_nodes.get(id(loss.loss_fn))
    cause = LossNotReduced(
        loss.name, reduction if isinstance(reduction, str) else None, tuple(int(dim) for dim in shape)
    )
    yield ctx.finding("warning", loss.name, cause, (node or g.cell_node(""),))

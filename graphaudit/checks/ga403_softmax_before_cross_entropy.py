"""GA403 softmax-before-cross-entropy."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import FlaggedHeads, flagged, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding


@dataclass(frozen=True)
class SoftmaxBeforeCrossEntropy(FlaggedHeads):
    """The network's output made by a softmax, given to a loss that applies its own softmax."""

    def message(self) -> str:
        return (
            f"{self.output} made by a softmax ({self.where}), but {self.evidence}. "
            "The loss takes a softmax of probabilities, which is nearly uniform."
        )

    def fix(self) -> str:
        return (
            f"Remove the softmax ({self.where}) from the training network and keep {self.loss} on "
            "the logits, applying the softmax only at inference."
        )


@register(
    "GA403",
    "softmax-before-cross-entropy",
    severity="error",
    needs=(LossTrace,),
    causes=(SoftmaxBeforeCrossEntropy,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A network that ends in a softmax, trained with a loss that applies its own softmax.

    What it does:
        Reports an error when the network's first output, followed back through shape-only
        operations, was made by a softmax (``nn.Softmax``, ``ops.softmax``,
        ``mint.softmax``) while the loss expects logits: ``nn.CrossEntropyLoss``,
        ``nn.SoftmaxCrossEntropyWithLogits``, or a custom loss cell that calls
        ``ops.cross_entropy``. The subject is the class name of the loss cell.

    Why is this bad:
        The loss applies log-softmax to probabilities: all inputs lie in [0, 1], so the
        second softmax is nearly uniform, the loss stays near ``log(num_classes)`` and its
        gradients are tiny. The model still learns a little, which hides the bug.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 10), nn.Softmax()])
        loss_fn = nn.CrossEntropyLoss()
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 10)])
        loss_fn = nn.CrossEntropyLoss()  # apply ops.softmax at inference
        ```
    """
    found = [p for p in pairings(ctx) if p.activation == "softmax" and p.expects == "logits-softmax"]
    for heads in flagged(ctx, found):
        cause = SoftmaxBeforeCrossEntropy(**FlaggedHeads.facts(heads))
        yield ctx.finding("error", cause.loss, cause, heads.nodes)

"""GA401 sigmoid-before-bce-with-logits."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import FlaggedHeads, flagged, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding


@dataclass(frozen=True)
class SigmoidBeforeLogitsLoss(FlaggedHeads):
    """The network's output made by a sigmoid, given to a loss that applies its own sigmoid."""

    def message(self) -> str:
        return (
            f"{self.output} made by a sigmoid ({self.where}), but {self.evidence}. "
            "The loss sees sigmoid(sigmoid(z)), which stays within (0.5, 0.73)."
        )

    def fix(self) -> str:
        return (
            f"Remove the sigmoid ({self.where}) from the training network and keep {self.loss}, "
            "applying the sigmoid only at inference; or keep it and use nn.BCELoss."
        )


@register(
    "GA401",
    "sigmoid-before-bce-with-logits",
    severity="error",
    needs=(LossTrace,),
    causes=(SigmoidBeforeLogitsLoss,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A network that ends in a sigmoid, trained with a loss that applies its own sigmoid.

    What it does:
        Follows the network's first output back through shape-only operations (reshape,
        squeeze, ``nn.Flatten``, ``nn.Dropout``...) and reports an error when it was made by
        a sigmoid (``nn.Sigmoid``, ``nn.Dense(activation="sigmoid")``, ``ops.sigmoid``) while
        the loss expects logits: ``nn.BCEWithLogitsLoss``, or a custom loss cell that calls
        ``ops.binary_cross_entropy_with_logits`` (or applies a sigmoid and then a binary
        cross-entropy). It also follows the loss's own traced graph, element by element, from
        each output it is given to the operation that consumes it: a detection head that
        concatenates a box branch and a class branch, and a zoo loss (mindyolo's
        ``YOLOv8Loss``) that reshapes, concatenates, slices and transposes the class part
        before its ``BCEWithLogitsLoss``, is reported when a sigmoid made that part, and not
        when the sigmoid is on a part the loss decodes otherwise. The subject is the class
        name of the loss cell.

    Why is this bad:
        The loss squashes the sigmoid's output a second time: ``sigmoid(sigmoid(z))`` lies in
        (0.5, 0.73), so every prediction is "positive", the loss can never go near zero and
        the gradients shrink. Training runs and the loss goes down a little, silently.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 1, activation="sigmoid")])
        train = nn.WithLossCell(net, nn.BCEWithLogitsLoss())
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 1)])
        train = nn.WithLossCell(net, nn.BCEWithLogitsLoss())  # apply ops.sigmoid at inference
        ```

        or keep the sigmoid and train with ``nn.BCELoss()`` (less stable numerically).
    """
    found = [p for p in pairings(ctx) if p.activation == "sigmoid" and p.expects == "logits-sigmoid"]
    for heads in flagged(ctx, found):
        cause = SigmoidBeforeLogitsLoss(**FlaggedHeads.facts(heads))
        yield ctx.finding("error", cause.loss, cause, heads.nodes)

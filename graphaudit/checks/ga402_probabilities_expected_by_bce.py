"""GA402 probabilities-expected-by-bce."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import FlaggedHeads, flagged, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding


@dataclass(frozen=True)
class LogitsGivenToProbabilityLoss(FlaggedHeads):
    """Unbounded logits, with no sigmoid or softmax, given to a loss that expects probabilities."""

    def message(self) -> str:
        return (
            f"{self.output} unbounded logits straight from {self.where}, with no sigmoid or "
            f"softmax, but {self.evidence}."
        )

    def fix(self) -> str:
        return (
            f"Train with nn.BCEWithLogitsLoss on the logits instead of {self.loss}, or end the "
            "network with nn.Sigmoid()."
        )


@register(
    "GA402",
    "probabilities-expected-by-bce",
    severity="error",
    needs=(LossTrace,),
    causes=(LogitsGivenToProbabilityLoss,),
    once="one finding per loss: BCELoss refuses values outside [0, 1], so a loss over several unbounded heads is traced on its first head only",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Unbounded logits fed to a loss that expects probabilities.

    What it does:
        Reports an error when the loss expects probabilities in [0, 1] (``nn.BCELoss``,
        ``ops.binary_cross_entropy`` in a custom loss cell) but the network's first output,
        followed back through shape-only operations, comes straight from a layer or an
        affine operation (``nn.Dense``, ``nn.Conv2d``, ``matmul``, ``add``...) with no
        sigmoid or softmax. The subject is the class name of the loss cell.

    Why is this bad:
        Binary cross-entropy takes ``log(p)`` and ``log(1 - p)``: a logit outside [0, 1]
        makes one of them NaN or, once clipped, a constant with no gradient. On some
        backends this raises, on others training quietly produces NaN or stalls.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 1)])
        loss_fn = nn.BCELoss()
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 1)])
        loss_fn = nn.BCEWithLogitsLoss()  # takes the logits, numerically stable
        ```

        or end the network with ``nn.Sigmoid()`` and keep ``nn.BCELoss``.
    """
    found = [p for p in pairings(ctx) if p.activation == "none" and p.expects == "probabilities"]
    for heads in flagged(ctx, found):
        cause = LogitsGivenToProbabilityLoss(**FlaggedHeads.facts(heads))
        yield ctx.finding("error", cause.loss, cause, heads.nodes)

"""GA406 softmax-before-bce."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import FlaggedHeads, flagged, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding


@dataclass(frozen=True)
class SoftmaxBeforeBinaryCrossEntropy(FlaggedHeads):
    """The network's output made by a softmax, given to a binary cross-entropy."""

    def message(self) -> str:
        return (
            f"{self.output} made by a softmax ({self.where}), but {self.evidence}: a binary cross-entropy "
            "judges each output as an independent probability, and the softmax makes them sum to 1 (over one unit it "
            "is the constant 1)."
        )

    def fix(self) -> str:
        return (
            f"Remove the softmax ({self.where}). For multi-label targets train the logits with nn.BCEWithLogitsLoss(); "
            "for mutually exclusive classes use nn.CrossEntropyLoss() with class-index labels."
        )


@register(
    "GA406",
    "softmax-before-bce",
    severity="error",
    needs=(LossTrace,),
    causes=(SoftmaxBeforeBinaryCrossEntropy,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A network that ends in a softmax, trained with a binary cross-entropy.

    What it does:
        Follows the network's output back through shape-only operations (as GA401-GA404 do)
        and reports an error when it was made by a softmax (``nn.Softmax``, ``ops.softmax``...)
        and the loss is a binary cross-entropy: ``nn.BCELoss``, ``nn.BCEWithLogitsLoss``, or a
        custom cell built on ``ops.binary_cross_entropy(_with_logits)``.

    Why is this bad:
        A binary cross-entropy judges each output on its own, as the probability of one yes/no
        question; a softmax ties them together so that they sum to 1. Over one unit the softmax
        is the constant 1 and nothing is learned at all; over several, two labels can never
        both be predicted (multi-label targets) and, for exclusive classes, a cross-entropy is
        the loss meant. With ``BCEWithLogitsLoss`` the loss also applies a sigmoid to values in
        (0, 1), which stays within (0.5, 0.73). The last-activation/loss agreement is a rule of
        NeuraLint (TOSEM'21) and UMLAUT (CHI'21).

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 4), nn.Softmax()])
        graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.BCELoss())
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 4)])
        loss_fn = nn.BCEWithLogitsLoss()        # multi-label: independent sigmoids
        loss_fn = nn.CrossEntropyLoss()         # exclusive classes: class-index labels
        ```
    """
    found = [
        p
        for p in pairings(ctx)
        if p.activation == "softmax" and p.expects in ("logits-sigmoid", "probabilities")
    ]
    for heads in flagged(ctx, found):
        cause = SoftmaxBeforeBinaryCrossEntropy(**FlaggedHeads.facts(heads))
        yield ctx.finding("error", cause.loss, cause, heads.nodes)

"""GA404 nll-without-log-softmax."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import FlaggedHeads, flagged, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding

_MADE_BY = {
    "softmax": "probabilities from a softmax",
    "sigmoid": "probabilities from a sigmoid",
    "none": "unbounded logits",
}


@dataclass(frozen=True)
class NotLogProbabilities(FlaggedHeads):
    """The network's output made by a softmax, a sigmoid or no normalisation, given to an NLL loss."""

    activation: str  # what made the output: "softmax", "sigmoid" or "none"
    operation: bool  # that activation is an operation (ops.softmax), not a cell

    def message(self) -> str:
        return (
            f"{self.output} {_MADE_BY[self.activation]} ({self.where}), not log-probabilities, "
            f"but {self.evidence}. NLL loss does not take the log itself."
        )

    def fix(self) -> str:
        if self.activation == "none":
            return (
                f"Add nn.LogSoftmax(axis=-1) at the end of the network (after {self.where}), or train the "
                f"logits with nn.CrossEntropyLoss instead of {self.loss}."
            )
        replacement = "ops.log_softmax(x, axis=-1)" if self.operation else "nn.LogSoftmax(axis=-1)"
        return f"Replace the {self.activation} ({self.where}) with {replacement}."


@register(
    "GA404",
    "nll-without-log-softmax",
    severity="error",
    needs=(LossTrace,),
    causes=(NotLogProbabilities,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A negative log-likelihood loss fed something other than log-probabilities.

    What it does:
        Reports an error when the loss expects log-probabilities (``nn.NLLLoss``,
        ``ops.nll_loss`` in a custom loss cell) but the network's first output, followed
        back through shape-only operations, was made by a softmax, a sigmoid, or a layer
        with no normalisation at all, rather than by a log-softmax. The subject is the
        class name of the loss cell.

    Why is this bad:
        NLL loss only picks ``-input[label]``: it does not take the log itself. Given
        probabilities it minimises ``-p``, whose gradient does not grow for confident
        mistakes; given raw logits it pushes the chosen logit to infinity without bound.
        Either way training runs and the accuracy is poor.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 10), nn.Softmax()])
        loss_fn = nn.NLLLoss()
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(16, 10), nn.LogSoftmax()])
        loss_fn = nn.NLLLoss()
        ```

        or drop the activation and train the logits with ``nn.CrossEntropyLoss()``.
    """
    found = [
        p
        for p in pairings(ctx)
        if p.expects == "log-probabilities" and p.activation in _MADE_BY and p.activation_node is not None
    ]
    for activation in dict.fromkeys(p.activation for p in found):
        for heads in flagged(ctx, [p for p in found if p.activation == activation]):
            assert heads.first.activation_node is not None
            operation = heads.first.activation_node.startswith("op:")
            cause = NotLogProbabilities(
                **FlaggedHeads.facts(heads), activation=activation, operation=operation
            )
            yield ctx.finding("error", cause.loss, cause, heads.nodes)

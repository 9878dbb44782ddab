"""GA404 nll-without-log-softmax."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import flagged, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding

_MADE_BY = {
    "softmax": "probabilities from a softmax",
    "sigmoid": "probabilities from a sigmoid",
    "none": "unbounded logits",
}


@register("GA404", "nll-without-log-softmax", severity="error", needs=(LossTrace,))
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
            if activation == "none":
                fix = (
                    f"Add nn.LogSoftmax(axis=-1) at the end of the network (after {heads.where}), or train the "
                    f"logits with nn.CrossEntropyLoss instead of {heads.first.loss_name}."
                )
            else:
                replacement = (
                    "ops.log_softmax(x, axis=-1)"
                    if heads.first.activation_node.startswith("op:")
                    else "nn.LogSoftmax(axis=-1)"
                )
                fix = f"Replace the {activation} ({heads.where}) with {replacement}."
            yield ctx.finding(
                "error",
                heads.first.loss_name,
                f"{heads.output} {_MADE_BY[activation]} ({heads.where}), not log-probabilities, "
                f"but {heads.first.evidence}. NLL loss does not take the log itself.",
                fix,
                heads.nodes,
            )

"""GA404 nll-without-log-softmax."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import describe_node, pairings
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
    for found in pairings(ctx):
        if found.expects != "log-probabilities" or found.activation not in _MADE_BY:
            continue
        if found.activation_node is None:
            continue
        where = describe_node(ctx.graph, found.activation_node)
        if found.activation == "none":
            fix = (
                f"Add nn.LogSoftmax(axis=-1) at the end of the network (after {where}), or train the "
                f"logits with nn.CrossEntropyLoss instead of {found.loss_name}."
            )
        else:
            replacement = (
                "ops.log_softmax(x, axis=-1)"
                if found.activation_node.startswith("op:")
                else "nn.LogSoftmax(axis=-1)"
            )
            fix = f"Replace the {found.activation} ({where}) with {replacement}."
        yield ctx.finding(
            "error",
            found.loss_name,
            f"The network's output is {_MADE_BY[found.activation]} ({where}), not log-probabilities, "
            f"but {found.evidence}. NLL loss does not take the log itself.",
            fix,
            found.nodes,
        )

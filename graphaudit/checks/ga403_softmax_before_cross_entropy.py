"""GA403 softmax-before-cross-entropy."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.lossflow import describe_node, pairings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.loss import LossTrace
from graphaudit.findings import Finding


@register("GA403", "softmax-before-cross-entropy", severity="error", needs=(LossTrace,))
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
    for found in pairings(ctx):
        if found.activation != "softmax" or found.expects != "logits-softmax":
            continue
        assert found.activation_node is not None
        where = describe_node(ctx.graph, found.activation_node)
        yield ctx.finding(
            "error",
            found.loss_name,
            f"The network's output is made by a softmax ({where}), but {found.evidence}. "
            "The loss takes a softmax of probabilities, which is nearly uniform.",
            f"Remove the softmax ({where}) from the training network and keep {found.loss_name} on "
            "the logits, applying the softmax only at inference.",
            found.nodes,
        )

"""GA905 probe-trainable-not-updated."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding
from graphaudit.probe import probe_findings


@register("GA905", "probe-trainable-not-updated", needs_probe=True)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter outside the optimizer, confirmed unchanged by one real step.

    What it does:
        Reports each parameter with ``requires_grad=True`` that is not in the optimizer and that one
        real step left unchanged, with the norm of the gradient that was computed and thrown
        away. It is info when the design declares the parameter frozen.

    Why is this bad:
        It is the dynamic confirmation of GA201: ``TrainOneStepCell`` differentiates only
        ``optimizer.parameters``, so the parameter keeps its initial value while a non-zero
        gradient shows it would have learned.

    Example:
        ```python
        optimizer = nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)  # head forgotten
        ```

    Use instead:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        ```
    """
    yield from probe_findings(ctx, "GA905")

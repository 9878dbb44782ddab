"""GA902 probe-frozen-changed."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding
from graphaudit.probe import probe_findings


@register("GA902", "probe-frozen-changed", needs_probe=True)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A frozen parameter that one real step moved.

    What it does:
        Reports each parameter with ``requires_grad=False`` (or left out of the optimizer) that
        ``optimizer(grads)`` changed, with the reason: weight decay applied to it, or momentum
        accumulated before the freeze.

    Why is this bad:
        MindSpore's optimizers decay every parameter they hold, gradient or not: a frozen
        weight passed to ``nn.SGD(..., weight_decay=0.1)`` shrinks by 1% a step (measured on
        2.10), so the "frozen" backbone slowly drifts to zero.

    Example:
        ```python
        net.backbone.weight.requires_grad = False
        optimizer = nn.SGD(net.get_parameters(), 0.1, weight_decay=0.1)
        ```

    Use instead:
        ```python
        net.backbone.weight.requires_grad = False
        optimizer = nn.SGD(net.trainable_params(), 0.1, weight_decay=0.1)
        ```
    """
    yield from probe_findings(ctx, "GA902")

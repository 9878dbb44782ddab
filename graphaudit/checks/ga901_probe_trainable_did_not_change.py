"""GA901 probe-trainable-did-not-change."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding
from graphaudit.probe import probe_findings


@register("GA901", "probe-trainable-did-not-change", needs_probe=True)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the optimizer should train that one real step left bit-identical.

    What it does:
        Runs one training step (``audit(..., probe=True, inputs=(x, y))``) and reports each
        parameter with ``requires_grad=True`` in the optimizer that did not change at all.
        It is a warning when the gradient was not zero but the update vanished in float
        rounding (a bias right before a BatchNorm), an error otherwise.

    Why is this bad:
        The static checks read the optimizer's list; only a real step shows that a parameter
        in it gets no update: a branch whose output is multiplied by zero or never used, a
        ``stop_gradient`` in the way, a learning rate of zero for its group.

    Example:
        ```python
        def construct(self, x):
            return self.fc(x) + self.aux(x) * 0.0  # aux never learns
        ```

    Use instead:
        ```python
        def construct(self, x):
            return self.fc(x) + self.aux(x)
        ```
    """
    yield from probe_findings(ctx, "GA901")

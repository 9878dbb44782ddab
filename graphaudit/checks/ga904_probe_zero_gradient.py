"""GA904 probe-zero-gradient."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding
from graphaudit.probe import probe_findings


@register("GA904", "probe-zero-gradient", needs_probe=True)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter whose gradient is exactly zero on the probe batch.

    What it does:
        Reports each trainable parameter whose gradient, on the probe batch, is exactly zero
        everywhere.

    Why is this bad:
        A parameter that never receives a gradient never learns: it sits on a dead branch, behind
        ``stop_gradient``, or behind an activation that is saturated for every input (ReLU that is
        never positive). One batch can be a coincidence, hence a warning.

    Example:
        ```python
        def construct(self, x):
            return self.fc(x) + ops.stop_gradient(self.aux(x))
        ```

    Use instead:
        ```python
        def construct(self, x):
            return self.fc(x) + self.aux(x)
        ```
    """
    yield from probe_findings(ctx, "GA904")

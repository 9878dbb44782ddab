"""GA903 probe-non-finite-gradient."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding
from graphaudit.probe import probe_findings


@register("GA903", "probe-non-finite-gradient", needs_probe=True)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter whose gradient has NaN or Inf values on the probe batch.

    What it does:
        Computes the gradients of one training step and reports each trainable parameter with
        NaN or Inf values in its gradient, with their counts (and the loss when it is not finite).

    Why is this bad:
        One NaN gradient makes every weight NaN after the update: the loss becomes NaN a few
        steps into training, far from its cause (a ``log`` of a non-positive value, a division
        by zero, an overflow in float16).

    Example:
        ```python
        def construct(self, x):
            return ops.log(self.fc(x))  # negative inputs give NaN
        ```

    Use instead:
        ```python
        def construct(self, x):
            return ops.log(ops.softplus(self.fc(x)) + 1e-6)
        ```
    """
    yield from probe_findings(ctx, "GA903")

"""GA904 probe-zero-gradient."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding


@register("GA904", "probe-zero-gradient", severity="warning", needs=(ProbeStep,))
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
    for p in ctx.need(ProbeStep).parameters:
        if not p.requires_grad or not p.grad_zero:
            continue
        yield ctx.finding(
            "warning",
            p.subject,
            f"The gradient of {p.subject}{p.named_as} is exactly zero on the probe batch: the loss does not depend on it "
            "(a dead branch: output unused, multiplied by zero, behind ops.stop_gradient, or a ReLU that "
            "is never active)"
            + ("; it is not even a parameter of the network." if not p.in_network else "."),
            f"Connect the branch that uses {p.subject} to the loss; if it is meant to stay fixed set "
            "requires_grad=False; if it only gets a gradient on some batches (a class-conditional "
            "branch, embedding rows), probe with a batch that exercises it.",
            (p.node,),
        )

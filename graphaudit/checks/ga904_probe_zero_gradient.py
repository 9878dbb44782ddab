"""GA904 probe-zero-gradient."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
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
    dead = [
        p.node
        for p in ctx.need(ProbeStep).parameters
        if p.requires_grad and p.grad_zero and p.in_network  # one the network does not hold is GA202's
    ]
    for group in one_group(ctx, dead):
        they = group.pronouns()
        one = len(group.names) == 1
        yield ctx.finding(
            "warning",
            group.subject,
            f"The {'gradient' if one else 'gradients'} of {group.describe('parameter')} {'is' if one else 'are'} "
            "exactly zero on the probe "
            f"batch: the loss does not depend on {they.object} (a dead branch: output unused, multiplied by "
            "zero, behind ops.stop_gradient, or a ReLU that is never active).",
            f"Connect the branch that uses {group.subject} to the loss; if {they.subject} {they.be} meant to "
            "stay fixed set requires_grad=False; if it only gets a gradient on some batches (a "
            "class-conditional branch, embedding rows), probe with a batch that exercises it.",
            group.nodes,
            subjects=group.names,
        )

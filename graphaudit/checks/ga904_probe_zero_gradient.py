"""GA904 probe-zero-gradient."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import GroupedCause, one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding
from graphaudit.text import is_are, pronouns


@dataclass(frozen=True)
class ZeroGradient(GroupedCause):
    """Trainable parameters whose gradient is exactly zero on the probe batch: the loss does not depend on them."""

    names_subjects = True
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # the subject is a cell all of whose parameters (of those found) are these
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        they, one = pronouns(len(self.names)), len(self.names) == 1
        what = self.described()
        return (
            f"The {'gradient' if one else 'gradients'} of {what} {is_are(len(self.names))} exactly zero on the probe "
            f"batch: the loss does not depend on {they.object} (a dead branch: output unused, multiplied by "
            "zero, behind ops.stop_gradient, or a ReLU that is never active)."
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"Connect the branch that uses {self.subject} to the loss; if {they.subject} {they.be} meant to "
            "stay fixed set requires_grad=False; if it only gets a gradient on some batches (a "
            "class-conditional branch, embedding rows), probe with a batch that exercises it."
        )


@register("GA904", "probe-zero-gradient", severity="warning", needs=(ProbeStep,), causes=(ZeroGradient,))
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
        if p.requires_grad
        and p.grad_zero
        and p.in_network  # one the network holds: the others do not train it
    ]
    for group in one_group(ctx, dead):
        cause = ZeroGradient(group.subject, group.names, group.cell is not None, group.note)
        yield ctx.finding("warning", group.subject, cause, group.nodes, subjects=group.names)

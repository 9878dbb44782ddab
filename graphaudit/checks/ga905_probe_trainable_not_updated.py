"""GA905 probe-trainable-not-updated."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import GroupedCause, probe_groups
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding
from graphaudit.text import pronouns


@dataclass(frozen=True)
class TrainableNotUpdated(GroupedCause):
    """Trainable parameters outside the optimizer that the training step did not update (*declared_frozen*: by design)."""

    names_subjects = True
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # the subject is a cell all of whose parameters (of those found) are these
    note: str  # a lone parameter's Parameter.name, when it differs from its path
    declared_frozen: bool
    forward_change: bool = False  # a lone parameter that the forward pass writes (a buffer)
    grad_norm: float | None = None  # a lone parameter's gradient norm, thrown away

    def message(self) -> str:
        they, one = pronouns(len(self.names)), len(self.names) == 1
        forward_note = (
            " (the forward pass writes it: if it is a buffer, set requires_grad=False)"
            if self.forward_change
            else ""
        )
        grad_note = (
            "" if self.grad_norm is None else f" Its gradient (norm {self.grad_norm:.3g}) was thrown away."
        )
        what = self.described()
        return (
            f"{what} {they.be} trainable (requires_grad=True) but not in the optimizer, and the training step did "
            f"not update {they.object}{forward_note}.{grad_note}"
            + (
                f" The design declares {they.object} frozen."
                if self.declared_frozen
                else f" {they.subject.capitalize()} {they.keep} {they.possessive} initial value"
                f"{'' if one else 's'} for all of training."
            )
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"Build the optimizer from net.trainable_params() (or add {self.subject} to a parameter group); if "
            f"{they.subject} {they.be} meant to stay fixed, set requires_grad=False."
        )


@register(
    "GA905",
    "probe-trainable-not-updated",
    severity="error",
    also=("info",),
    needs=(ProbeStep,),
    confirms="GA201",
    causes=(TrainableNotUpdated,),
)
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
    step = ctx.need(ProbeStep)
    causes: dict[bool, list] = {}
    for p in step.parameters:
        if not (p.requires_grad and not p.in_optimizer and p.in_network and not p.moved_by_optimizer):
            continue
        # An optimizer built from part of the network leaves out every parameter of the rest: one cause.
        causes.setdefault(p.name in step.declared_frozen, []).append(p)
    for declared, left in causes.items():
        for group, found in probe_groups(ctx, left):
            p, one = found[0], len(found) == 1
            cause = TrainableNotUpdated(
                p.subject if one else group.subject,
                group.names,
                group.cell is not None,
                p.named_as if one else "",
                declared,
                bool(one and p.forward_change),
                float(p.grad_norm) if one and p.grad_norm is not None else None,
            )
            severity = "info" if declared else "error"
            yield ctx.finding(severity, cause.subject, cause, group.graph_nodes, subjects=group.names)

"""GA905 probe-trainable-not-updated."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import probe_groups
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding


@register(
    "GA905",
    "probe-trainable-not-updated",
    severity="error",
    also=("info",),
    needs=(ProbeStep,),
    confirms="GA201",
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
        for group, members in probe_groups(ctx, left):
            they, one = group.pronouns(), len(members) == 1
            p = members[0]
            forward_note = (
                " (the forward pass writes it: if it is a buffer, set requires_grad=False)"
                if one and p.forward_change
                else ""
            )
            grad_note = (
                ""
                if not one or p.grad_norm is None
                else f" Its gradient (norm {p.grad_norm:.3g}) was thrown away."
            )
            what = f"{p.subject}{p.named_as}" if one else group.describe("parameter")
            name = p.subject if one else group.subject
            yield ctx.finding(
                "info" if declared else "error",
                name,
                f"{what} {they.be} trainable (requires_grad=True) but not in the optimizer, and the training step did "
                f"not update {they.object}{forward_note}.{grad_note}"
                + (
                    f" The design declares {they.object} frozen."
                    if declared
                    else f" {they.subject.capitalize()} {they.keep} {they.possessive} initial value"
                    f"{'' if one else 's'} for all of training."
                ),
                f"Build the optimizer from net.trainable_params() (or add {name} to a parameter group); if "
                f"{'it is' if one else 'they are'} meant to stay fixed, set requires_grad=False.",
                group.graph_nodes,
                subjects=group.names,
            )

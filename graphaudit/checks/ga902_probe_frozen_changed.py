"""GA902 probe-frozen-changed."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import GroupedCause, probe_groups
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding
from graphaudit.text import pronouns


@dataclass(frozen=True)
class FrozenParameterMoved(GroupedCause):
    """Frozen parameters (requires_grad=False, or left out of the optimizer) that the optimizer step changed.

    ``how`` says what froze them (``"requires_grad=False"``, ``"not in the optimizer"``); ``by``
    what moved them: ``"state"`` (the optimizer's momentum or moments), ``"written"`` (written
    although not among ``optimizer.parameters``) or ``"decay"`` (weight decay).
    """

    names_subjects = True
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # the subject is a cell all of whose parameters (of those found) are these
    note: str  # a lone parameter's Parameter.name, when it differs from its path
    how: str
    by: str
    weight_decay: float | None  # "decay": the group's weight decay (None: a weight decay schedule)
    change: float  # the largest change the step made

    def message(self) -> str:
        they = pronouns(len(self.names))
        if self.by == "state":
            was = "was" if len(self.names) == 1 else "were"
            why = (
                f"{they.subject} {they.be} in the optimizer and the optimizer's state for {they.object} (momentum or "
                f"moments accumulated before {they.subject} {was} frozen) still moves {they.object}"
            )
        elif self.by == "written":
            why = (
                f"the optimizer step wrote {they.object} although {they.subject} {they.be} not among "
                "optimizer.parameters"
            )
        else:
            why = (
                f"{they.subject} {they.be} in the optimizer with {self._decay()}, and weight decay moves "
                f"{they.object} even though {they.possessive} gradient is zero"
            )
        what = self.described()
        return (
            f"{what} {they.be} frozen ({self.how}) but the optimizer step changed {they.object} by up to "
            f"{self.change:.3g}: {why}. A frozen (e.g. pretrained) weight drifts every step."
        )

    def _decay(self) -> str:
        return (
            "a weight decay schedule" if self.weight_decay is None else f"weight_decay={self.weight_decay:g}"
        )

    def fix(self) -> str:
        if self.by == "state":
            return f"Build the optimizer from net.trainable_params() so that {self.subject} is left out."
        if self.by == "written":
            return f"Find what writes {self.subject} during optimizer(grads) (a shared or aliased Parameter)."
        return (
            f"Build the optimizer from net.trainable_params() so that {self.subject} is left out, or put "
            f"{pronouns(len(self.names)).object} in a parameter group with weight_decay=0.0."
        )


@register(
    "GA902", "probe-frozen-changed", severity="error", needs=(ProbeStep,), causes=(FrozenParameterMoved,)
)
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
    causes: dict[tuple[str, str], list] = {}
    for p in ctx.need(ProbeStep).parameters:
        frozen = not p.requires_grad or not p.in_optimizer
        if not (frozen and p.moved_by_optimizer):
            continue
        how = "requires_grad=False" if not p.requires_grad else "not in the optimizer"
        if p.in_optimizer and (math.isnan(p.weight_decay) or p.weight_decay > 0):
            kind = (
                "a weight decay schedule"
                if math.isnan(p.weight_decay)
                else f"weight_decay={p.weight_decay:g}"
            )
        else:
            kind = "state" if p.in_optimizer else "written"
        # One optimizer built over frozen weights moves every one of them: one cause.
        causes.setdefault((how, kind), []).append(p)
    for (how, kind), moved in causes.items():
        for group, found in probe_groups(ctx, moved):
            decay = found[0].weight_decay
            cause = FrozenParameterMoved(
                group.subject if len(found) > 1 else found[0].subject,
                group.names,
                group.cell is not None,
                found[0].named_as if len(found) == 1 else "",
                how,
                kind if kind in ("state", "written") else "decay",
                None if math.isnan(decay) else float(decay),
                float(max(p.optimizer_change for p in found)),
            )
            yield ctx.finding("error", cause.subject, cause, group.graph_nodes, subjects=group.names)

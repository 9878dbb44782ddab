"""GA902 probe-frozen-changed."""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import probe_groups
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding


@register("GA902", "probe-frozen-changed", severity="error", needs=(ProbeStep,))
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
        for group, members in probe_groups(ctx, moved):
            they = group.pronouns()
            name = group.subject if len(members) > 1 else members[0].subject
            if kind == "state":
                why = (
                    f"{they.subject} {they.be} in the optimizer and the optimizer's state for {they.object} (momentum or "
                    f"moments accumulated before {they.subject} {'was' if len(members) == 1 else 'were'} frozen) still "
                    f"moves {they.object}"
                )
                fix = f"Build the optimizer from net.trainable_params() so that {name} is left out."
            elif kind == "written":
                why = f"the optimizer step wrote {they.object} although {they.subject} {they.be} not among optimizer.parameters"
                fix = f"Find what writes {name} during optimizer(grads) (a shared or aliased Parameter)."
            else:
                why = (
                    f"{they.subject} {they.be} in the optimizer with {kind}, and weight decay moves {they.object} even "
                    f"though {they.possessive} gradient is zero"
                )
                fix = (
                    f"Build the optimizer from net.trainable_params() so that {name} is left out, or put "
                    f"{they.object} in a parameter group with weight_decay=0.0."
                )
            what = (
                f"{members[0].subject}{members[0].named_as}"
                if len(members) == 1
                else group.describe("parameter")
            )
            yield ctx.finding(
                "error",
                name,
                f"{what} {they.be} frozen ({how}) but the optimizer step changed {they.object} by up to "
                f"{max(p.optimizer_change for p in members):.3g}: {why}. A frozen (e.g. pretrained) weight drifts "
                "every step.",
                fix,
                group.graph_nodes,
                subjects=group.names,
            )

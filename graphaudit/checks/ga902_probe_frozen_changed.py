"""GA902 probe-frozen-changed."""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphaudit.checks import register
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
    for p in ctx.need(ProbeStep).parameters:
        frozen = not p.requires_grad or not p.in_optimizer
        if not (frozen and p.moved_by_optimizer):
            continue
        name = p.subject
        how = "requires_grad=False" if not p.requires_grad else "not in the optimizer"
        if p.in_optimizer and (math.isnan(p.weight_decay) or p.weight_decay > 0):
            decay = (
                "a weight decay schedule"
                if math.isnan(p.weight_decay)
                else f"weight_decay={p.weight_decay:g}"
            )
            why = f"it is in the optimizer with {decay}, and weight decay moves it even though its gradient is zero"
            fix = (
                f"Build the optimizer from net.trainable_params() so that {name} is left out, or put it in a "
                "parameter group with weight_decay=0.0."
            )
        elif p.in_optimizer:
            why = (
                "it is in the optimizer and the optimizer's state for it (momentum or moments accumulated "
                "before it was frozen) still moves it"
            )
            fix = f"Build the optimizer from net.trainable_params() so that {name} is left out."
        else:
            why = "the optimizer step wrote it although it is not among optimizer.parameters"
            fix = f"Find what writes {name} during optimizer(grads) (a shared or aliased Parameter)."
        yield ctx.finding(
            "error",
            name,
            f"{name}{p.named_as} is frozen ({how}) but the optimizer step changed it by up to "
            f"{p.optimizer_change:.3g}: {why}. A frozen (e.g. pretrained) weight drifts every step.",
            fix,
            (p.node,),
        )

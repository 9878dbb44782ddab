"""GA203 frozen-in-optimizer."""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks._shared.sharing import network_node
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Finding


@register(
    "GA203",
    "frozen-in-optimizer",
    severity="error",
    also=("warning",),
    needs=(OptimizerView,),
    once="one finding per weight-decay setting of the optimizer: every frozen parameter it holds with that decay is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A frozen parameter (requires_grad=False) that the optimizer still holds.

    What it does:
        Reports each network parameter with ``requires_grad=False`` that is among
        ``optimizer.parameters``: an error when the optimizer applies weight decay to it (a
        decay schedule counts as decaying), a warning otherwise.

    Why is this bad:
        ``requires_grad=False`` stops the gradient, not the optimizer. Weight decay is added
        to the (zero) gradient, so the "frozen" weight shrinks every step: with
        ``nn.SGD(..., learning_rate=0.1, weight_decay=0.1)`` one ``TrainOneStepCell`` step
        multiplies it by 0.99 (checked on MindSpore 2.10), and pretrained weights decay
        towards zero over training. Without weight decay the weight stays put, but the
        optimizer still allocates state for it and the freeze is fragile.

    Example:
        ```python
        for p in net.backbone.get_parameters():
            p.requires_grad = False
        optimizer = nn.AdamWeightDecay(net.get_parameters(), 1e-3, weight_decay=0.01)
        ```

    Use instead:
        ```python
        optimizer = nn.AdamWeightDecay(net.trainable_params(), 1e-3, weight_decay=0.01)
        ```
    """
    decayed: dict[str, list[str]] = {}
    kept: list[str] = []
    for entry in ctx.optimizer_entries:
        param = entry.parameter
        node = network_node(ctx, param)
        if node is None or param.requires_grad:
            continue
        decay = entry.weight_decay
        if math.isnan(decay) or decay > 0:
            amount = "a weight decay schedule" if math.isnan(decay) else f"weight_decay={decay:g}"
            decayed.setdefault(amount, []).append(node)
        else:
            kept.append(node)
    for amount, nodes in decayed.items():
        for group in one_group(ctx, nodes):
            they = group.pronouns()
            yield ctx.finding(
                "error",
                group.subject,
                f"{group.describe('parameter')} {they.be} frozen (requires_grad=False) but in the "
                f"optimizer with {amount}: the decay still applies, so {they.subject} {they.keep} shrinking "
                "towards zero every step.",
                "Build the optimizer from net.trainable_params() so that frozen parameters are left out, or "
                "exclude them from weight decay (a parameter group with weight_decay=0.0).",
                group.graph_nodes,
                subjects=group.names,
            )
    for group in one_group(ctx, kept):
        they = group.pronouns()
        yield ctx.finding(
            "warning",
            group.subject,
            f"{group.describe('parameter')} {they.be} frozen (requires_grad=False) but in the "
            f"optimizer (without weight decay): {they.subject} {they.be} not changing now, but the optimizer "
            f"keeps state for {they.object} and any decay or group change would move {they.object}.",
            "Build the optimizer from net.trainable_params() so that frozen parameters are left out.",
            group.graph_nodes,
            subjects=group.names,
        )

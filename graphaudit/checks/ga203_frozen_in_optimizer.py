"""GA203 frozen-in-optimizer."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks._shared.sharing import network_node
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Cause, Finding
from graphaudit.text import members, pronouns


@dataclass(frozen=True)
class FrozenButDecayed(Cause):
    """Frozen parameters (requires_grad=False) in the optimizer with a weight decay, which still shrinks them."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    holder: str | None  # the cell all of whose parameters they are, when there is one
    weight_decay: float | None  # the decay, None for a weight decay schedule
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        they = pronouns(len(self.names))
        amount = (
            "a weight decay schedule" if self.weight_decay is None else f"weight_decay={self.weight_decay:g}"
        )
        return (
            f"{members(self.names, 'parameter', holder=self.holder, note=self.note)} {they.be} frozen "
            f"(requires_grad=False) but in the optimizer with {amount}: the decay still applies, so "
            f"{they.subject} {they.keep} shrinking towards zero every step."
        )

    def fix(self) -> str:
        return (
            "Build the optimizer from net.trainable_params() so that frozen parameters are left out, or "
            "exclude them from weight decay (a parameter group with weight_decay=0.0)."
        )


@dataclass(frozen=True)
class FrozenInOptimizer(Cause):
    """Frozen parameters (requires_grad=False) in the optimizer without weight decay: still, it keeps state for them."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    holder: str | None  # the cell all of whose parameters they are, when there is one
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"{members(self.names, 'parameter', holder=self.holder, note=self.note)} {they.be} frozen "
            f"(requires_grad=False) but in the optimizer (without weight decay): {they.subject} {they.be} not "
            f"changing now, but the optimizer keeps state for {they.object} and any decay or group change would "
            f"move {they.object}."
        )

    def fix(self) -> str:
        return "Build the optimizer from net.trainable_params() so that frozen parameters are left out."


@register(
    "GA203",
    "frozen-in-optimizer",
    severity="error",
    also=("warning",),
    needs=(OptimizerView,),
    causes=(FrozenButDecayed, FrozenInOptimizer),
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
    decayed: dict[float | None, list[str]] = {}  # the decay (None: a schedule) -> the parameters
    kept: list[str] = []
    for entry in ctx.optimizer_entries:
        param = entry.parameter
        node = network_node(ctx, param)
        if node is None or param.requires_grad:
            continue
        decay = entry.weight_decay
        if math.isnan(decay) or decay > 0:
            # to 6 significant digits, as said: a float32 0.0001 and a float64 one are one setting
            decayed.setdefault(None if math.isnan(decay) else float(f"{decay:g}"), []).append(node)
        else:
            kept.append(node)
    for decay, nodes in decayed.items():
        for group in one_group(ctx, nodes):
            cause = FrozenButDecayed(group.names, group.holder, decay, group.note)
            yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)
    for group in one_group(ctx, kept):
        cause = FrozenInOptimizer(group.names, group.holder, group.note)
        yield ctx.finding("warning", group.subject, cause, group.graph_nodes, subjects=group.names)

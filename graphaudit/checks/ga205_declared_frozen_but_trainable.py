"""GA205 declared-frozen-but-trainable."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.patterns import unmatched_parameter_patterns
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Finding


@register(
    "GA205",
    "declared-frozen-but-trainable",
    severity="error",
    needs=(
        DeclaredDesign,
        OptimizerView,
    ),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the design declares frozen that will train.

    What it does:
        Reports each parameter matching ``Spec.frozen`` that has ``requires_grad=True`` and is
        in the optimizer. (Trainable but left out of the optimizer is a freeze by omission,
        reported as info by GA201.)

    Why is this bad:
        Fine-tuning recipes freeze a pretrained backbone on purpose; when the freeze is
        forgotten, or done on the wrong prefix, the backbone is updated with a learning rate
        meant for a fresh head and its pretrained features are destroyed. Training still
        runs and the loss still falls, so nothing points at the mistake.

    Example:
        ```python
        spec = Spec(frozen=["backbone.*"])
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)  # the freeze was never done
        ```

    Use instead:
        ```python
        for p in net.backbone.get_parameters():
            p.requires_grad = False
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        ```
    """
    yield from unmatched_parameter_patterns(ctx, ctx.spec.frozen, "frozen")
    if ctx.optimizer is None or not ctx.spec.frozen:
        return
    for node, param in ctx.parameters():
        if not ctx.spec.is_frozen(param.name) or not param.requires_grad or not ctx.in_optimizer(param):
            continue
        yield ctx.finding(
            "error",
            ctx.subject_of(node),
            f"{ctx.subject_of(node)}{ctx.named_as(node)} is declared frozen but has requires_grad=True and is in the optimizer: it will train.",
            f"Set {ctx.subject_of(node)}.requires_grad = False and build the optimizer from net.trainable_params(), "
            "or remove it from Spec(frozen=...) if it is meant to train.",
            [node],
        )

"""GA205 declared-frozen-but-trainable."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
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
    if ctx.optimizer is None or not ctx.spec.frozen:
        return
    members = [
        node
        for node, param in ctx.parameters()
        if ctx.spec.is_frozen(param.name) and param.requires_grad and ctx.in_optimizer(param)
    ]
    # One cause, one finding: the freeze that was never done, however many parameters it covers.
    for group in one_group(ctx, members):
        they = group.pronouns()
        setting = f"{group.names[0]}.requires_grad" if len(group.names) == 1 else "requires_grad of each"
        yield ctx.finding(
            "error",
            group.subject,
            f"{group.describe('parameter')} {'is' if len(group.names) == 1 else 'are'} declared frozen but "
            f"{'has' if len(group.names) == 1 else 'have'} requires_grad=True and {they.be} in the optimizer: "
            f"{they.subject} will train.",
            f"Set {setting} = False and build the optimizer from net.trainable_params(), "
            f"or remove {they.object} from Spec(frozen=...) if {they.subject} {'is' if len(group.names) == 1 else 'are'} meant to train.",
            group.graph_nodes,
            subjects=group.names,
        )

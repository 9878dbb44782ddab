"""GA206 declared-trainable-but-frozen."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.patterns import unmatched_parameter_patterns
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Finding

# Running statistics that normalization layers keep as requires_grad=False Parameters: they
# are never meant to train, so a glob such as ``backbone.*`` in Spec.trainable does not cover them.
STATISTICS = frozenset(
    {"moving_mean", "moving_variance", "running_mean", "running_var", "num_batches_tracked"}
)


def is_statistic(ctx: AuditContext, node: str) -> bool:
    """Whether every owner holds this parameter under a running-statistics attribute name."""
    names = [d["name"] for _, _, d in ctx.graph.in_edges(node, data=True) if d["kind"] == g.OWNS]
    return bool(names) and all(name in STATISTICS for name in names)


@register(
    "GA206", "declared-trainable-but-frozen", severity="error", needs=(DeclaredDesign,), uses=(OptimizerView,)
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the design declares trainable that will not train.

    What it does:
        Reports each parameter matching ``Spec.trainable`` that has ``requires_grad=False``
        (and, when an optimizer is given, whether it is in it; a trainable parameter missing
        from the optimizer is GA201's error, reported once). Normalization statistics
        (``moving_mean``, ``moving_variance``) are left out unless named exactly.

    Why is this bad:
        Freezing code often selects parameters by name (``if not p.name.startswith("head")``);
        after a rename it freezes the layer that was meant to learn. The network then trains
        only part of what its author intended, or nothing at all, and the flat loss is blamed
        on the learning rate.

    Example:
        ```python
        spec = Spec(trainable=["classifier.*"])
        for p in net.get_parameters():
            if not p.name.startswith("head"):  # the head is called "classifier" now
                p.requires_grad = False
        ```

    Use instead:
        ```python
        for p in net.backbone.get_parameters():
            p.requires_grad = False
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        ```
    """
    yield from unmatched_parameter_patterns(ctx, ctx.spec.trainable, "trainable")
    for node, param in ctx.parameters():
        if not ctx.spec.is_trainable(param.name):
            continue
        if is_statistic(ctx, node) and not param.requires_grad and param.name not in ctx.spec.trainable:
            continue
        problems = []
        if not param.requires_grad:
            problems.append("has requires_grad=False")
        if ctx.optimizer is not None and not ctx.in_optimizer(param):
            problems.append("is not in the optimizer")
        if not problems or problems == ["is not in the optimizer"]:
            continue  # trainable but left out of the optimizer: GA201 reports it, once
        yield ctx.finding(
            "error",
            ctx.subject_of(node),
            f"{ctx.subject_of(node)}{ctx.named_as(node)} is declared trainable but {' and '.join(problems)}: it will not train.",
            f"Set {ctx.subject_of(node)}.requires_grad = True and build the optimizer from net.trainable_params() "
            "(after freezing), or remove it from Spec(trainable=...) if it is meant to stay fixed.",
            [node],
        )

"""GA205 declared-frozen-but-trainable."""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.context import AuditContext
from graphaudit.findings import Finding
from graphaudit.spec import matches_any


def unmatched_parameter_patterns(ctx: AuditContext, patterns: list[str], field: str) -> Iterator[Finding]:
    """Errors for the *field* patterns of the spec that match no parameter name."""
    names = [param.name for _, param in ctx.parameters()]
    for pattern in patterns:
        if any(matches_any((pattern,), name) for name in names):
            continue
        close = difflib.get_close_matches(pattern.rstrip("*."), names, n=3, cutoff=0.6)
        hint = f" Close matches: {', '.join(close)}." if close else ""
        source = f" ({ctx.spec.source})" if ctx.spec.source else ""
        yield ctx.finding(
            "error",
            pattern,
            f"Spec.{field}{source} names {pattern!r}, which matches no parameter of the network, so the "
            f"declaration does nothing.{hint}",
            "Fix the pattern: parameter names are Parameter.name values such as 'backbone.conv1.weight'; "
            "globs use fnmatch ('backbone.*').",
            [g.cell_node("")],
        )


@register("GA205", "declared-frozen-but-trainable")
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
            param.name,
            f"{param.name} is declared frozen but has requires_grad=True and is in the optimizer: it will train.",
            f"Set {param.name}.requires_grad = False and build the optimizer from net.trainable_params(), "
            "or remove it from Spec(frozen=...) if it is meant to train.",
            [node],
        )

"""GA305 forbidden-connection."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Finding
from graphaudit.graph.connectivity import connected, resolve


@register(
    "GA305",
    "forbidden-connection",
    severity="error",
    needs=(
        TracedPass,
        DeclaredDesign,
    ),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A data flow between two cells that the design forbids.

    What it does:
        For each ``(source, target)`` in ``Spec.forbidden_connections`` (cell paths or
        globs), reports every matching pair for which, in the traced forward pass, a tensor
        produced inside *source* reaches *target* directly or through functional operations
        only. A pattern that matches no cell is reported too, since the rule guards nothing.

    Why is this bad:
        Some designs depend on two parts staying apart: the towers of a two-tower retrieval
        model, a student that must not see the teacher's features, a causal branch that must
        not see the future. A wrong variable name wires one into the other; the network runs
        and even trains well, but it is not the model that was designed and it will not
        behave the same at inference time.

    Example:
        ```python
        # Spec(forbidden_connections=[("user_tower", "item_tower")])
        def construct(self, user, item):
            u = self.user_tower(user)
            v = self.item_tower(item + u)   # the item tower now sees the user
            return (u * v).sum(-1)
        ```

    Use instead:
        ```python
        def construct(self, user, item):
            u = self.user_tower(user)
            v = self.item_tower(item)
            return (u * v).sum(-1)
        ```
    """
    by_path = g.cell_nodes_by_path(ctx.graph)
    for source, target in ctx.spec.forbidden_connections:
        sources, targets = resolve(ctx.graph, source), resolve(ctx.graph, target)
        for s in sources:
            for t in targets:
                if not connected(ctx.graph, s, t):
                    continue
                rule = f" (rule {source} -> {target})" if (s, t) != (source, target) else ""
                yield ctx.finding(
                    "error",
                    s,
                    f"data flows from {s} into {t} in the traced forward pass, which the design "
                    f"forbids{rule}.",
                    f"Check construct where {t} is called and feed it what the design says instead of "
                    f"{s}'s output (often a wrong variable name), or correct the design.",
                    [by_path[s], by_path[t]],
                )

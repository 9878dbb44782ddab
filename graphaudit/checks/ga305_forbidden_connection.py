"""GA305 forbidden-connection."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder, listing
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
        globs), reports the matching pairs for which, in the traced forward pass, a tensor
        produced inside *source* reaches *target* directly or through functional operations
        only: one finding per rule, listing every cell its glob matches that leaks. A
        pattern that matches no cell is reported too (GA300), since the rule guards nothing.

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
        pairs = [(s, t) for s in sources for t in targets if connected(ctx.graph, s, t)]
        if not pairs:
            continue
        # One rule broken by one wrong variable: the flow seen from every cell the glob matches.
        leaking = list(dict.fromkeys(s for s, _ in pairs))
        reached = list(dict.fromkeys(t for _, t in pairs))
        rule = f" (rule {source} -> {target})" if pairs != [(source, target)] else ""
        many = len(pairs) > 1
        output = f"{leaking[0]}'s output" if len(leaking) == 1 else f"the output of {listing(leaking)}"
        yield ctx.finding(
            "error",
            leaking[0] if len(leaking) == 1 else holder(leaking),
            f"data flows from {listing(leaking)} into {listing(reached)} in the traced forward pass"
            f"{f' ({len(pairs)} pairs)' if many else ''}, which the design forbids{rule}.",
            f"Check construct where {listing(reached)} {'are' if len(reached) > 1 else 'is'} called and feed "
            f"{'them' if len(reached) > 1 else 'it'} what the design says instead of "
            f"{output} "
            "(often a wrong variable name), or correct the design.",
            list(dict.fromkeys(by_path[p] for p in (*leaking, *reached))),
            subjects=leaking,
        )

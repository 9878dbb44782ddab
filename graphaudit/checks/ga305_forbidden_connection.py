"""GA305 forbidden-connection."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.graph.connectivity import connected, resolve
from graphaudit.text import is_are, listing, pronouns


@dataclass(frozen=True)
class ForbiddenConnection(Cause):
    """Data flowing between cells that the design forbids to connect (Spec.forbidden_connections)."""

    names_subjects = True
    source: str  # the rule's source pattern (a cell path or glob)
    target: str  # the rule's target pattern
    leaking: tuple[str, ...]  # the cells the source pattern matches whose output reaches a target
    reached: tuple[str, ...]  # the cells the target pattern matches that it reaches
    pairs: int  # how many (leaking, reached) pairs are connected

    def message(self) -> str:
        exact = self.pairs == 1 and self.leaking == (self.source,) and self.reached == (self.target,)
        rule = "" if exact else f" (rule {self.source} -> {self.target})"
        many = f" ({self.pairs} pairs)" if self.pairs > 1 else ""
        return (
            f"data flows from {listing(self.leaking)} into {listing(self.reached)} in the traced forward pass"
            f"{many}, which the design forbids{rule}."
        )

    def fix(self) -> str:
        reached = len(self.reached)
        output = (
            f"{self.leaking[0]}'s output"
            if len(self.leaking) == 1
            else f"the output of {listing(self.leaking)}"
        )
        return (
            f"Check construct where {listing(self.reached)} {is_are(reached)} called and feed "
            f"{pronouns(reached).object} what the design says instead of {output} "
            "(often a wrong variable name), or correct the design."
        )


@register(
    "GA305",
    "forbidden-connection",
    severity="error",
    needs=(
        TracedPass,
        DeclaredDesign,
    ),
    causes=(ForbiddenConnection,),
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
    by_path = ctx.cell_nodes_by_path()
    for source, target in ctx.spec.forbidden_connections:
        sources, targets = resolve(ctx.graph, source), resolve(ctx.graph, target)
        pairs = [(s, t) for s in sources for t in targets if connected(ctx.graph, s, t)]
        if not pairs:
            continue
        # One rule broken by one wrong variable: the flow seen from every cell the glob matches.
        leaking = tuple(dict.fromkeys(s for s, _ in pairs))
        reached = tuple(dict.fromkeys(t for _, t in pairs))
        yield ctx.finding(
            "error",
            leaking[0] if len(leaking) == 1 else holder(list(leaking)),
            ForbiddenConnection(source, target, leaking, reached, len(pairs)),
            list(dict.fromkeys(by_path[p] for p in (*leaking, *reached))),
            subjects=leaking,
        )

"""GA304 missing-connection."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.graph.connectivity import connected, resolve


@dataclass(frozen=True)
class ExpectedConnectionMissing(Cause):
    """A connection the design expects (Spec.expected_connections) that the traced forward pass does not have."""

    names_subjects = True
    source: str  # the design's source pattern (a cell path or glob)
    target: str  # the design's target pattern

    def message(self) -> str:
        return (
            f"the design expects data to flow from {self.source} into {self.target}, but in the traced forward pass "
            f"no tensor made inside {self.source} reaches {self.target} (directly or through functional "
            "operations only)."
        )

    def fix(self) -> str:
        return (
            f"Check construct where {self.target} is called: feed it what {self.source} produces (a forgotten "
            f"residual add, skip concatenation or an overwritten variable), or correct the design "
            f"({self.source} -> {self.target})."
        )


@register(
    "GA304",
    "missing-connection",
    severity="error",
    needs=(
        TracedPass,
        DeclaredDesign,
    ),
    causes=(ExpectedConnectionMissing,),
    once="one finding per expected connection of the design: a glob rule is satisfied by any one of its pairs",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A data flow the design expects between two cells that the network does not have.

    What it does:
        For each ``(source, target)`` in ``Spec.expected_connections`` (cell paths or globs),
        checks in the traced forward pass that a tensor produced inside *source* reaches
        *target*, directly or through functional operations only (``+``, ``cat``,
        ``reshape``...; another cell in between breaks the connection). With globs, one
        matching pair connected is enough. A pattern that matches no cell is reported too.

    Why is this bad:
        A forgotten residual (``x = self.block(x)`` instead of ``x = x + self.block(x)``), a
        U-Net skip that concatenates the wrong feature map, or a layer bypassed because a
        variable was overwritten: the network still trains, just to a worse accuracy, and
        nothing ever fails.

    Example:
        ```python
        # Spec(expected_connections=[("stem", "head"), ("block", "head")])
        def construct(self, x):
            x = self.stem(x)
            x = self.block(x)          # residual forgotten: stem no longer feeds head
            return self.head(x)
        ```

    Use instead:
        ```python
        def construct(self, x):
            x = self.stem(x)
            x = x + self.block(x)
            return self.head(x)
        ```
    """
    by_path = ctx.cell_nodes_by_path()
    for source, target in ctx.spec.expected_connections:
        sources, targets = resolve(ctx.graph, source), resolve(ctx.graph, target)
        if not sources or not targets:
            continue
        if any(connected(ctx.graph, s, t) for s in sources for t in targets):
            continue
        yield ctx.finding(
            "error",
            source,
            ExpectedConnectionMissing(source, target),
            list(dict.fromkeys(by_path[p] for p in (*sources, *targets))),
        )

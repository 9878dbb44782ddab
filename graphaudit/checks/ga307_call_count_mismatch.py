"""GA307 call-count-mismatch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.graph.connectivity import resolve
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class CallCountMismatch(Cause):
    """Cells called a different number of times in the traced forward pass than Spec.calls says."""

    names_subjects = True
    cells: tuple[str, ...]  # the cells' paths, each called *actual* times
    actual: int
    expected: int
    shared: tuple[
        str, ...
    ] = ()  # a lone cell's paths when it is one object under several, its calls counted together

    def message(self) -> str:
        note = (
            f" (one cell object under {listing(self.shared, None)}: its calls are counted together)"
            if self.shared
            else ""
        )
        named = f"{self.cells[0]} was" if len(self.cells) == 1 else f"{listing(self.cells)} were each"
        return (
            f"{named} called {counted(self.actual, 'time')} in the traced forward pass, but the design says "
            f"{self.expected}{note}."
        )

    def fix(self) -> str:
        return (
            f"Check the loop or branch in construct that calls {self.cells[0] if len(self.cells) == 1 else 'them'} "
            "(an off-by-one range, a condition, a config value not read), or correct Spec.calls."
        )


@register(
    "GA307",
    "call-count-mismatch",
    severity="error",
    needs=(
        TracedPass,
        DeclaredDesign,
    ),
    causes=(CallCountMismatch,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A cell called a different number of times than the design says.

    What it does:
        For each ``path: n`` in ``Spec.calls`` (a cell path or a glob), counts the calls of
        that cell object in the traced forward pass and reports a count other than *n*.
        Calls are counted per cell object: a cell shared under several paths counts the calls
        made through every path. A path that names no cell is reported with close matches.
        The cells one glob matches that are each called the same wrong number of times (one
        loop, one config value) are one finding.
        A pattern that names no cell is GA300's.

    Why is this bad:
        Iterative refinement, weight-shared recurrent blocks, siamese encoders and
        test-time loops depend on a cell being applied an exact number of times. An
        off-by-one ``range``, a loop variable shadowed, or a config value that is never
        read change that number silently: the network still produces the right shapes.

    Example:
        ```python
        # Spec(calls={"refine": 3})
        for _ in range(1, self.steps):   # off by one: refine runs twice
            x = self.refine(x)
        ```

    Use instead:
        ```python
        for _ in range(self.steps):
            x = self.refine(x)
        ```
    """
    by_path = ctx.cell_nodes_by_path()
    for pattern, expected in ctx.spec.calls.items():
        paths = resolve(ctx.graph, pattern)
        if not paths:
            continue  # the pattern names no cell: there are no calls to count
        seen: set[str] = set()
        wrong: dict[int, list[tuple[str, str]]] = {}
        for path in paths:
            node = by_path[path]
            if node in seen:
                continue
            seen.add(node)
            actual = len(g.calls_of(ctx.graph, node))
            if actual != expected and _declared_shared_split(ctx, path, expected, by_path):
                continue  # one shared cell became several copies: its calls did not change, its sharing did
            if actual != expected:
                wrong.setdefault(actual, []).append((path, node))
        # The cells a glob matches, each called as many wrong times: one loop or config, one cause.
        for actual, cells in wrong.items():
            path, node = cells[0]
            shared = tuple(g.node_paths(ctx.graph, node))
            paths = tuple(p for p, _ in cells)
            cause = CallCountMismatch(
                paths, actual, expected, shared if len(shared) > 1 and len(cells) == 1 else ()
            )
            yield ctx.finding(
                "error",
                path if len(cells) == 1 else holder(list(paths)),
                cause,
                [n for _, cell in cells for n in (cell, *g.calls_of(ctx.graph, cell))],
                subjects=paths,
            )


def _declared_shared_split(ctx: AuditContext, path: str, expected: int, by_path: dict[str, str]) -> bool:
    """Whether *path* is in a declared ``shared_cells`` group now split into several cells, called *expected* times in all.

    The count a snapshot records for a shared cell is that of the one object (two towers'
    embedding: 2). When the sharing breaks, each copy is called once: GA103 reports the
    split, and the calls, counted over the group's cells, are what the design says.
    """
    for group in ctx.spec.shared_cells:
        paths = [p for pattern in group for p in resolve(ctx.graph, pattern)]
        if path not in paths:
            continue
        cells = {by_path[p] for p in paths if p in by_path}
        if len(cells) > 1 and sum(len(g.calls_of(ctx.graph, c)) for c in cells) == expected:
            return True
    return False

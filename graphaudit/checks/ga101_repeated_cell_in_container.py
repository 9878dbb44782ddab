"""GA101 repeated-cell-in-container."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import holds_parameters, is_container
from graphaudit.checks._shared.grouping import holder, listing, pattern
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Finding


@register("GA101", "repeated-cell-in-container", severity="error", uses=(DeclaredDesign,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The same Cell object placed in several slots of a container.

    What it does:
        Finds a cell object (with parameters) that a ``SequentialCell``, ``CellList`` or
        ``CellDict`` holds in more than one slot. The containers built alike that each repeat
        a cell so (``[block] * 3`` in a stage's constructor, in every stage) are one finding.

    Why is this bad:
        ``nn.SequentialCell([block] * 3)`` does not make three blocks: it puts one block object
        in three slots, so the three "layers" share one set of weights and the network has a
        third of the capacity its author meant. Nothing fails; the model just trains worse.

    Example:
        ```python
        block = Block()
        body = nn.SequentialCell([block] * 3)
        ```

    Use instead:
        ```python
        body = nn.SequentialCell([Block() for _ in range(3)])
        ```

        If the repetition is intended (a recurrent block, an ALBERT-style shared layer),
        declare it in the design: ``Spec(shared_cells=[["body.0", "body.1", "body.2"]])``.
    """
    causes: dict[tuple[str, str, int], list[tuple[str, str, list[str]]]] = {}
    for parent, attrs in g.nodes_of_kind(ctx.graph, g.CELL):
        if not is_container(ctx.structure.cells[parent]):
            continue
        slots: dict[str, list[str]] = {}
        for _, child, edge in ctx.graph.out_edges(parent, data=True):
            if edge["kind"] == g.CONTAINS:
                slots.setdefault(child, []).append(edge["name"])
        for child, names in slots.items():
            if len(names) < 2 or not holds_parameters(ctx.graph, child):
                continue
            prefix = f"{attrs['path']}." if attrs["path"] else ""
            paths = [prefix + name for name in names]
            if all(ctx.spec.declares_shared_cell(path) for path in paths):
                continue
            # ``[block] * 3`` in a stage's constructor repeats in every stage built from it: one cause.
            key = (pattern(ctx.cell_path(parent)), ctx.graph.nodes[child]["class_name"], len(names))
            causes.setdefault(key, []).append((parent, child, paths))
    for (_, class_name, slots), found in causes.items():
        parent, child, paths = found[0]
        if len(found) == 1:
            attrs = ctx.graph.nodes[parent]
            message = (
                f"{ctx.cell_path(parent)} ({attrs['class_name']}) holds one {class_name} object in "
                f"{slots} slots ({', '.join(paths)}): they share one set of weights."
            )
        else:
            holders = [ctx.cell_path(p) for p, _, _ in found]
            message = (
                f"{len(found)} containers ({listing(holders)}) each hold one {class_name} object in {slots} slots "
                f"(the first in {', '.join(paths)}): the slots of each share one set of weights."
            )
        yield ctx.finding(
            "error",
            paths[0] if len(found) == 1 else holder([p for _, _, ps in found for p in ps]),
            message,
            f"Create a separate {class_name} for each slot, e.g. "
            f"nn.SequentialCell([{class_name}(...) for _ in range({slots})]); if the sharing is "
            f"meant, declare it: Spec(shared_cells=[{paths!r}]).",
            [n for p, c, _ in found for n in (c, p)],
            subjects=[p for _, _, ps in found for p in ps],
        )

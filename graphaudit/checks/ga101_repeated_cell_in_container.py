"""GA101 repeated-cell-in-container.

One cause is one finding: the containers whose repetition one line of the user's code makes
(``[block] * depth`` in a ``stage()`` helper that builds every stage) are one finding, and so
are the containers one loop builds alike (``blocks.0.body``, ``blocks.1.body``). The line is
read from the source of the classes and helpers that build each container (:func:`_site`):
the assignment of the attribute that holds it, and the helpers that assignment calls.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import holds_parameters, is_container
from graphaudit.checks._shared.grouping import holder, pattern
from graphaudit.checks._shared.repetition_sites import Site, assigned_sites, helper_sites, user_function
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


def _site(ctx: AuditContext, container: str) -> Site | None:
    """The one repetition in the user's code that built *container* (a cell node), ``None`` when unsure.

    The container's own class when the user wrote it (``class Stage(nn.SequentialCell)``);
    else the nearest cell above it that is not a container, and the line of its methods
    that assigns the attribute leading to it, followed into the helpers that line calls.
    """
    cells, by_path = ctx.structure.cells, ctx.cell_nodes_by_path()
    own = user_function(getattr(type(cells[container]), "__init__", None))
    found = frozenset(helper_sites(own, 1, set())) if own is not None else frozenset()
    path = ctx.graph.nodes[container]["path"]
    parts = path.split(".") if path else []
    for depth in range(len(parts), 0, -1):  # the nearest cell above that is not a container
        owner = by_path.get(".".join(parts[: depth - 1]))
        if found or owner is None or is_container(cells[owner]):
            continue
        rest = parts[depth:]
        found = assigned_sites(type(cells[owner]), parts[depth - 1], rest[0] if len(rest) == 1 else None)
        break
    return next(iter(found)) if len(found) == 1 else None


@dataclass(frozen=True)
class RepeatedCellInContainer(Cause):
    """One cell object in several slots of each of these containers, made by one line of code (or one loop)."""

    holders: tuple[str, ...]  # the containers' paths
    holder_class: str  # the class of the first container
    classes: tuple[str, ...]  # the classes of the repeated cells, each once
    slots: tuple[int, ...]  # how many slots the repeated cell fills, each count once, sorted
    paths: tuple[str, ...]  # the first container's slots, by path
    site_code: str  # the repetition that made them ("[block] * 3"), "" when no one line can be told
    site_where: str  # the function it is in ("Stage.__init__()")
    site_file: str  # its file's name
    site_line: int  # its line

    @property
    def names_subjects(self) -> bool:  # type: ignore[override]
        # The subjects are the slots, the first container's first: its slots are all named.
        return len(self.holders) == 1 or len(self.paths) >= 4

    def message(self) -> str:
        what = f"one {self.classes[0]} object" if len(self.classes) == 1 else "one cell object"
        slots = f"{self.slots[0]}" if len(self.slots) == 1 else f"{self.slots[0]}-{self.slots[-1]}"
        site = f"`{self.site_code}` in {self.site_where} ({self.site_file}:{self.site_line})"
        made = f"{site} repeats one cell object" if self.site_code else ""
        if len(self.holders) == 1:
            return (
                f"{self.holders[0]} ({self.holder_class}) holds {what} in {slots} slots "
                f"({listing(self.paths, None)}){f': {made}, so' if made else ':'} they share one set of weights."
            )
        holders = listing(self.holders)
        containers = holders if len(self.holders) <= 4 else f"{len(self.holders)} containers ({holders})"
        return (
            f"{containers} each hold {what} in {slots} slots (the first in {listing(self.paths, None)}): "
            f"{f'{made}, so ' if made else ''}the slots of each share one set of weights."
        )

    def fix(self) -> str:
        name = self.classes[0] if len(self.classes) == 1 else "Block"
        where = f" in {self.site_where} ({self.site_file}:{self.site_line})" if self.site_code else ""
        paths = list(self.paths)
        spec = f"[{paths!r}]" if len(self.holders) == 1 else f"[{paths!r}, ...] (one list per container)"
        return (
            f"Create a separate {name} for each slot{where}, e.g. nn.SequentialCell([{name}(...) for _ in "
            f"range({self.slots[-1]})]); if the sharing is meant, declare it: Spec(shared_cells={spec})."
        )


@register(
    "GA101",
    "repeated-cell-in-container",
    severity="error",
    uses=(DeclaredDesign,),
    causes=(RepeatedCellInContainer,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The same Cell object placed in several slots of a container.

    What it does:
        Finds a cell object (with parameters) that a ``SequentialCell``, ``CellList`` or
        ``CellDict`` holds in more than one slot. The containers whose repetition one line
        makes (``[block] * depth`` in a helper that builds every stage, read from the source
        of the classes and helpers that build them) are one finding naming that line, and so
        are the containers built alike at the paths of one loop (``blocks.*.body``) when no
        line can be told.

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
    causes: dict[Any, list[tuple[str, str, list[str], Site | None]]] = {}
    for parent, attrs in g.nodes_of_kind(ctx.graph, g.CELL):
        if not is_container(ctx.structure.cells[parent]):
            continue
        slots: dict[str, list[str]] = {}
        for _, child, edge in ctx.graph.out_edges(parent, data=True):
            if edge["kind"] == g.CONTAINS:
                slots.setdefault(child, []).append(edge["name"])
        built = None
        for child, names in slots.items():
            if len(names) < 2 or not holds_parameters(ctx.graph, child):
                continue
            prefix = f"{attrs['path']}." if attrs["path"] else ""
            paths = [prefix + name for name in names]
            if all(ctx.spec.declares_shared_cell(path) for path in paths):
                continue
            built = built or [_site(ctx, parent)]
            site = built[0]
            if site is not None and site.times not in (None, len(names)):
                site = None  # `[block] * 3` cannot have put it in another number of slots
            # One line repeating in every container it builds, or (no line told) one loop's containers: one cause.
            class_name = ctx.graph.nodes[child]["class_name"]
            key = site or (pattern(ctx.cell_path(parent)), class_name, len(names))
            causes.setdefault(key, []).append((parent, child, paths, site))
    for found in causes.values():
        yield _finding(ctx, found)


def _finding(ctx: AuditContext, found: list[tuple[str, str, list[str], Site | None]]) -> Finding:
    parent, _, paths, site = found[0]
    cause = RepeatedCellInContainer(
        tuple(ctx.cell_path(p) for p, _, _, _ in found),
        ctx.graph.nodes[parent]["class_name"],
        tuple(dict.fromkeys(ctx.graph.nodes[c]["class_name"] for _, c, _, _ in found)),
        tuple(sorted({len(ps) for _, _, ps, _ in found})),
        tuple(paths),
        site.code if site is not None else "",
        site.where if site is not None else "",
        os.path.basename(site.file) if site is not None else "",
        site.line if site is not None else 0,
    )
    return ctx.finding(
        "error",
        paths[0] if len(found) == 1 else holder([p for _, _, ps, _ in found for p in ps]),
        cause,
        [n for p, c, _, _ in found for n in (c, p)],
        subjects=[p for _, _, ps, _ in found for p in ps],
    )

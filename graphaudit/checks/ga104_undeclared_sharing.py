"""GA104 undeclared-sharing."""

from __future__ import annotations

import dataclasses
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import holds_parameters, is_container
from graphaudit.checks._shared.grouping import cell_group, holder, pattern
from graphaudit.checks._shared.sharing import tie_groups, tied_parameters, ties_described
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Cause, Finding
from graphaudit.spec import Spec
from graphaudit.text import LIMIT, listing


@dataclass(frozen=True)
class UndeclaredTie(Cause):
    """Tied parameters (each one Parameter object held by several cells) that the design does not declare."""

    names_subjects = True
    names: tuple[str, ...]  # the tied parameters' Parameter.name
    paths: tuple[str, ...]  # every attribute path of the first
    owners: tuple[str, ...]  # the cells holding the first, by path

    def message(self) -> str:
        if len(self.names) == 1:
            what = (
                f"{self.names[0]} is one Parameter object tied under {len(self.paths)} paths "
                f"({listing(self.paths, None)})"
            )
            return f"{what}, but the design does not declare this sharing."
        return f"{ties_described(self.names, self.paths, self.owners)}, but the design does not declare these ties."

    def fix(self) -> str:
        one = len(self.names) == 1
        return (
            f"If the tie{' is' if one else 's are'} meant, add {'it' if one else 'each'} to the spec: "
            f"shared_parameters=[{list(self.paths)!r}{'' if one else ', ...'}]; otherwise give each owner its own "
            "Parameter."
        )


@dataclass(frozen=True)
class UndeclaredSharedCell(Cause):
    """Cells (with parameters) reachable under several paths that the design does not declare shared."""

    class_name: str  # the shared cells' class
    cells: int  # how many cell objects are shared alike
    paths: tuple[str, ...]  # every path of the first
    undeclared: tuple[str, ...]  # the paths of them all that no Spec.shared_cells group covers
    places: tuple[str, ...]  # every path of them all, when several are shared alike (the finding's subjects)

    @property
    def names_subjects(self) -> bool:  # type: ignore[override]
        # The first cell's paths are named, and the undeclared paths of all (the first 4).
        return self.cells == 1 or set(self.places[:LIMIT]) <= {*self.paths, *self.undeclared[:LIMIT]}

    def message(self) -> str:
        if self.cells == 1:
            return (
                f"one {self.class_name} object is reachable under {len(self.paths)} paths ({listing(self.paths, None)}), "
                f"so they share one set of weights, but the design does not declare {listing(self.undeclared, None)} "
                "shared."
            )
        return (
            f"{self.cells} {self.class_name} objects are each reachable under several paths (the first under "
            f"{listing(self.paths, None)}), so each place shares one set of weights, but the design does not declare "
            f"{listing(self.undeclared)} shared."
        )

    def fix(self) -> str:
        return (
            f"If the sharing is meant, add it to the spec: shared_cells=[{list(self.paths)!r}"
            f"{', ...' if self.cells > 1 else ''}]; otherwise create a separate {self.class_name} for each place."
        )


def declares_something(spec: Spec) -> bool:
    """Whether *spec* states any design at all (it is not the default, empty ``Spec()``)."""
    return dataclasses.replace(spec, source=None) != Spec()


def _ancestors(path: str) -> Iterator[str]:
    parts = path.split(".")
    for end in range(len(parts) - 1, 0, -1):
        yield ".".join(parts[:end])


def _repeated_in_container(ctx: AuditContext, node: str) -> bool:
    """Whether GA101 already reports this cell (one object in several slots of a container)."""
    slots: dict[str, int] = {}
    for parent, _, edge in ctx.graph.in_edges(node, data=True):
        if edge["kind"] == g.CONTAINS and is_container(ctx.structure.cells[parent]):
            slots[parent] = slots.get(parent, 0) + 1
    return any(count > 1 for count in slots.values())


def _parameters_declared_tied(ctx: AuditContext, node: str) -> bool:
    """Whether every parameter under the shared cell is declared tied: the cell's sharing says nothing more."""
    params = [t for _, t, d in ctx.graph.out_edges(node, data=True) if d["kind"] == g.OWNS]
    children = [t for _, t, d in ctx.graph.out_edges(node, data=True) if d["kind"] == g.CONTAINS]
    if not params and not children:
        return False
    for param in params:
        names = [ctx.graph.nodes[param]["name"], *g.node_paths(ctx.graph, param)]
        if not any(ctx.spec.declares_shared_parameter(name) for name in names):
            return False
    return all(
        _parameters_declared_tied(ctx, child) for child in children if holds_parameters(ctx.graph, child)
    )


@register(
    "GA104",
    "undeclared-sharing",
    severity="warning",
    needs=(DeclaredDesign,),
    causes=(UndeclaredTie, UndeclaredSharedCell),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Weight sharing that the declared design does not mention.

    What it does:
        When an audit is given a design (a ``Spec`` that declares anything at all), reports
        each tied parameter that no ``Spec.shared_parameters`` group covers, and each cell
        with parameters reachable under several paths that ``Spec.shared_cells`` does not
        cover, unless every parameter of that cell is declared tied (the design then says it:
        an Embedding reachable under three paths whose only weight is declared one shared
        parameter). Without a spec it stays silent (GA102 lists the ties as info). The ties,
        or the shared cells, made alike in blocks built alike are one finding.

    Why is this bad:
        A spec is the author's statement of the design; sharing missing from it is either an
        accident (a layer assigned to two attributes, ``self.b.weight = self.a.weight`` left
        in) or an undocumented tie. Either way the model has fewer free weights than the
        author believes, and nothing in training reveals it.

    Example:
        ```python
        self.decoder.weight = self.embed.embedding_table
        spec = Spec(frozen=["embed.*"])  # a design, but the tie is not in it
        ```

    Use instead:
        ```python
        spec = Spec(frozen=["embed.*"], shared_parameters=[["embed.embedding_table", "decoder.weight"]])
        ```

        or remove the tie if it is not meant.
    """
    if not declares_something(ctx.spec):
        return
    undeclared_ties = [
        (node, owners, paths)
        for node, owners, paths in tied_parameters(ctx)
        if not ctx.spec.declares_shared_parameter(ctx.graph.nodes[node]["name"])
        and not any(ctx.spec.declares_shared_parameter(p) for p in paths)
    ]
    # Ties made alike in every block (or a weight and a bias tied together) are one cause.
    for group in tie_groups(ctx, undeclared_ties):
        _, owners, paths = group[0]
        names = tuple(ctx.graph.nodes[n]["name"] for n, _, _ in group)
        cause = UndeclaredTie(names, tuple(paths), tuple(ctx.cell_path(o) for o in owners))
        yield ctx.finding(
            "warning",
            names[0] if len(group) == 1 else holder([ctx.subject_of(n) for n, _, _ in group]),
            cause,
            list(dict.fromkeys(n for tie in group for n in (tie[0], *tie[1]))),
            subjects=names,
        )

    shared = {node: g.node_paths(ctx.graph, node) for node, _ in g.nodes_of_kind(ctx.graph, g.CELL)}
    shared = {node: paths for node, paths in shared.items() if len(paths) > 1}
    shared_paths = {path: node for node, paths in shared.items() for path in paths}
    causes: dict[tuple[str, ...], list[tuple[str, list[str], list[str]]]] = {}
    for node, paths in shared.items():
        # A cell inside a shared cell is shared only through it: report the outer cell alone.
        if all(any(shared_paths.get(a, node) != node for a in _ancestors(p)) for p in paths):
            continue
        if not holds_parameters(ctx.graph, node) or _repeated_in_container(ctx, node):
            continue
        undeclared = [
            p
            for p in paths
            if not ctx.spec.declares_shared_cell(p)
            and not any(ctx.spec.declares_shared_cell(a) for a in _ancestors(p))
        ]
        if not undeclared or _parameters_declared_tied(ctx, node):
            continue
        # One cell shared alike in every block (self.b = self.a in its constructor) is one cause.
        causes.setdefault(tuple(pattern(p) for p in paths), []).append((node, paths, undeclared))
    for group in causes.values():
        node, paths, _ = group[0]
        places = tuple(p for _, ps, _ in group for p in ps) if len(group) > 1 else ()
        cause = UndeclaredSharedCell(
            ctx.graph.nodes[node]["class_name"],
            len(group),
            tuple(paths),
            tuple(p for _, _, u in group for p in u),
            places,
        )
        yield ctx.finding(
            "warning",
            paths[0] if len(group) == 1 else cell_group(ctx, [n for n, _, _ in group]).subject,
            cause,
            [n for n, _, _ in group],
            subjects=places,
        )

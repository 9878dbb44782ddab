"""GA103 declared-shared-not-shared."""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Finding
from graphaudit.suggest import close_list


def parameter_matches(ctx: AuditContext, pattern: str) -> list[str]:
    """Parameter nodes whose ``Parameter.name`` or any attribute path matches the glob *pattern*."""
    found = []
    for node, attrs in g.nodes_of_kind(ctx.graph, g.PARAMETER):
        names = [attrs["name"], *g.node_paths(ctx.graph, node)]
        if any(fnmatchcase(name, pattern) for name in names):
            found.append(node)
    return found


def _is_below(path: str, ancestor: str) -> bool:
    return (ancestor == "" and path != "") or path.startswith(f"{ancestor}.")


def cell_matches(ctx: AuditContext, pattern: str) -> list[tuple[str, str]]:
    """``(path, cell node)`` for the outermost cell paths matching the glob *pattern*.

    ``fnmatch``'s ``*`` also matches dots, so ``body.*`` matches ``body.0`` and ``body.0.0``;
    a matched path below another matched path is dropped, keeping the cells the user meant.
    """
    matched = [
        (path, node) for path, node in g.cell_nodes_by_path(ctx.graph).items() if fnmatchcase(path, pattern)
    ]
    paths = [path for path, _ in matched]
    return [(path, node) for path, node in matched if not any(_is_below(path, other) for other in paths)]


def known_parameter_names(ctx: AuditContext) -> list[str]:
    names: list[str] = []
    for node, attrs in g.nodes_of_kind(ctx.graph, g.PARAMETER):
        names.extend([attrs["name"], *g.node_paths(ctx.graph, node)])
    return list(dict.fromkeys(names))


@register("GA103", "declared-shared-not-shared", severity="error", needs=(DeclaredDesign,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A group the design declares shared that is not one object in the network.

    What it does:
        For each ``Spec.shared_parameters`` group, resolves every member (a ``Parameter.name``
        or an attribute path, globs allowed) and reports the group when the members are more
        than one Parameter object, naming each by its attribute path (and its ``Parameter.name``
        when that differs). Likewise for each ``Spec.shared_cells`` group and Cell
        objects. A declared name that matches nothing is also reported, with close matches.

    Why is this bad:
        Tying is easy to break without noticing: ``decoder.weight.set_data(embed.embedding_table)``
        copies the values once instead of tying, a refactor re-creates a layer, a checkpoint load
        replaces a Parameter. The network still trains, but as a larger, different model than
        the one designed, and the tie the author relies on is not there.

    Example:
        ```python
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight.set_data(self.embed.embedding_table)  # a copy, not a tie
        spec = Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])
        ```

    Use instead:
        ```python
        self.decoder.weight = self.embed.embedding_table  # the same Parameter object
        ```
    """
    parameter_names: list[str] | None = None
    for group in ctx.spec.shared_parameters:
        resolved: list[str] = []
        for pattern in group:
            nodes = parameter_matches(ctx, pattern)
            if not nodes:
                if parameter_names is None:
                    parameter_names = known_parameter_names(ctx)
                yield ctx.finding(
                    "error",
                    pattern,
                    f"the design declares {pattern!r} in the shared parameter group {group!r}, but no "
                    f"parameter name or attribute path matches it.{close_list(pattern, parameter_names)}",
                    "Correct the name in Spec(shared_parameters=...) to a Parameter.name or attribute path "
                    "of the network (see net.parameters_and_names()).",
                    [g.cell_node("")],
                )
            resolved.extend(n for n in nodes if n not in resolved)
        if len(resolved) > 1:
            names = [ctx.subject_of(n) for n in resolved]  # attribute paths, what a user greps for
            described = [ctx.subject_of(n) + ctx.named_as(n) for n in resolved]
            yield ctx.finding(
                "error",
                names[1],
                f"the design declares {group!r} one shared parameter, but they are {len(resolved)} "
                f"distinct Parameter objects ({', '.join(described)}): the weights are not tied.",
                f"Tie them by assignment, e.g. make the owner of {names[1]} hold the Parameter "
                f"{names[0]} (cell.weight = other.weight), not a copy of its values; or correct the spec.",
                resolved,
            )
    cell_paths: list[str] | None = None
    for group in ctx.spec.shared_cells:
        resolved_cells: dict[str, str] = {}
        for pattern in group:
            matches = cell_matches(ctx, pattern)
            if not matches:
                if cell_paths is None:
                    cell_paths = [p for p in g.cell_nodes_by_path(ctx.graph) if p]
                yield ctx.finding(
                    "error",
                    pattern,
                    f"the design declares {pattern!r} in the shared cell group {group!r}, but no cell "
                    f"path matches it.{close_list(pattern, cell_paths)}",
                    "Correct the path in Spec(shared_cells=...) to a cell path of the network "
                    "(see net.cells_and_names()).",
                    [g.cell_node("")],
                )
            for path, node in matches:
                resolved_cells.setdefault(node, path)
        if len(resolved_cells) > 1:
            paths = list(resolved_cells.values())
            yield ctx.finding(
                "error",
                paths[1],
                f"the design declares {group!r} one shared cell, but they are {len(paths)} distinct "
                f"Cell objects ({', '.join(paths)}): they do not share weights.",
                f"Put the same cell object in every place (e.g. build it once and assign it to {paths[1]} "
                "too), or correct the spec.",
                list(resolved_cells),
            )

"""What a declared name or glob of the design names in the network (shared by the Spec checks).

Each field of a :class:`~graphaudit.spec.Spec` is resolved the way the check that enforces it
resolves it: ``frozen``/``trainable`` against ``Parameter.name``; ``shared_parameters`` against
parameter names and attribute paths; ``shared_cells`` against cell paths (outermost match);
connections and ``calls`` against cell paths (:func:`graphaudit.graph.connectivity.resolve`).
:func:`declared_patterns` lists every pattern with the field it comes from, so that GA300 can
report those that name nothing, once each.

Example:
    >>> from mindspore import nn
    >>> from graphaudit import Spec
    >>> from graphaudit.checks.context import AuditContext
    >>> ctx = AuditContext.build(nn.SequentialCell([nn.Dense(3, 2)]), spec=Spec(frozen=["wieght"], calls={"0": 1}))
    >>> [(p.field, p.pattern, p.kind, names(ctx, p)) for p in declared_patterns(ctx.spec)]
    [('frozen', 'wieght', 'parameter', []), ('calls', '0', 'cell', ['0'])]
"""

from __future__ import annotations

from collections.abc import Iterator
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, NamedTuple

from graphaudit import graph as g
from graphaudit.graph.connectivity import resolve
from graphaudit.spec import Spec, matches_any

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = [
    "Declared",
    "cell_matches",
    "declared_patterns",
    "known_parameter_names",
    "names",
    "parameter_matches",
]


class Declared(NamedTuple):
    """One name or glob of the design: the field it is in, where in it, and what it must name."""

    field: str  # the Spec field, e.g. "expected_connections"
    where: str  # as the user wrote it: "Spec.expected_connections ('a', 'b')"
    pattern: str
    kind: str  # "parameter" (frozen, trainable), "tied" (shared_parameters) or "cell"


def declared_patterns(spec: Spec) -> Iterator[Declared]:
    """Every pattern of *spec*, in the order of its fields."""
    for field in ("frozen", "trainable"):
        for pattern in getattr(spec, field):
            yield Declared(field, f"Spec.{field}", pattern, "parameter")
    for group in spec.shared_parameters:
        for pattern in group:
            yield Declared("shared_parameters", f"the shared parameter group {group!r}", pattern, "tied")
    for group in spec.shared_cells:
        for pattern in group:
            yield Declared("shared_cells", f"the shared cell group {group!r}", pattern, "cell")
    for field in ("expected_connections", "forbidden_connections", "linear_connections"):
        for source, target in getattr(spec, field):
            for pattern in (source, target):
                yield Declared(field, f"Spec.{field} ({source!r}, {target!r})", pattern, "cell")
    for pattern in spec.calls:
        yield Declared("calls", f"Spec.calls[{pattern!r}]", pattern, "cell")


def names(ctx: AuditContext, declared: Declared) -> list[str]:
    """What *declared* names in the network: parameter names, or cell paths."""
    if declared.kind == "parameter":
        return [param.name for _, param in ctx.parameters() if matches_any((declared.pattern,), param.name)]
    if declared.kind == "tied":
        return [ctx.subject_of(node) for node in parameter_matches(ctx, declared.pattern)]
    if declared.field == "shared_cells":
        return [path for path, _ in cell_matches(ctx, declared.pattern)]
    return resolve(ctx.graph, declared.pattern)


def parameter_matches(ctx: AuditContext, pattern: str) -> list[str]:
    """Parameter nodes whose ``Parameter.name`` or any attribute path matches the glob *pattern*."""
    found = []
    for node, attrs in g.nodes_of_kind(ctx.graph, g.PARAMETER):
        candidates = [attrs["name"], *g.node_paths(ctx.graph, node)]
        if any(fnmatchcase(name, pattern) for name in candidates):
            found.append(node)
    return found


def _is_below(path: str, ancestor: str) -> bool:
    return (ancestor == "" and path != "") or path.startswith(f"{ancestor}.")


def cell_matches(ctx: AuditContext, pattern: str) -> list[tuple[str, str]]:
    """``(path, cell node)`` for the outermost cell paths matching the glob *pattern*.

    ``fnmatch``'s ``*`` also matches dots, so ``body.*`` matches ``body.0`` and ``body.0.0``;
    a matched path below another matched path is dropped, keeping the cells the user meant.
    """
    matched = [(path, node) for path, node in ctx.cell_nodes_by_path().items() if fnmatchcase(path, pattern)]
    paths = [path for path, _ in matched]
    return [(path, node) for path, node in matched if not any(_is_below(path, other) for other in paths)]


def known_parameter_names(ctx: AuditContext) -> list[str]:
    """Every parameter name and attribute path, for "close matches"."""
    found: list[str] = []
    for node, attrs in g.nodes_of_kind(ctx.graph, g.PARAMETER):
        found.extend([attrs["name"], *g.node_paths(ctx.graph, node)])
    return list(dict.fromkeys(found))

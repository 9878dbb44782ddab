"""Declared names and paths that match nothing in the network (shared by GA205/GA206, GA304-GA307).

A design that names a parameter or a cell the network does not have declares nothing: the
rule it states is never checked. These helpers make the one finding for such a pattern,
with the names that look like it.

Example:
    >>> from mindspore import nn
    >>> from graphaudit import Spec
    >>> from graphaudit.checks import all_checks
    >>> from graphaudit.checks.context import AuditContext
    >>> ctx = AuditContext.build(nn.Dense(3, 2), spec=Spec(frozen=["wieght"])).bound(all_checks()["GA205"])
    >>> [f.message.split("nothing.")[1] for f in unmatched_parameter_patterns(ctx, ["wieght"], "frozen")]
    [' Close matches: weight.']
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphaudit import graph as g
from graphaudit.graph.connectivity import close_paths
from graphaudit.spec import matches_any
from graphaudit.suggest import close_list

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext
    from graphaudit.findings import Finding

__all__ = ["unmatched_cell_pattern", "unmatched_parameter_patterns"]


def _source(ctx: AuditContext) -> str:
    return f" ({ctx.spec.source})" if ctx.spec.source else ""


def unmatched_cell_pattern(ctx: AuditContext, pattern: str, where: str) -> Finding:
    """The finding for a spec pattern (in *where*) that names no cell of the network."""
    close = close_paths(ctx.graph, pattern)
    hint = f" Close matches: {', '.join(close)}." if close else ""
    return ctx.finding(
        "error",
        pattern,
        f"{where}{_source(ctx)} names {pattern!r}, which matches no cell path of the network, so the "
        f"rule checks nothing.{hint}",
        "Fix the path in the design (cell paths are attribute paths such as 'layer1.0.conv1'; "
        "globs use fnmatch: 'layer1.*').",
        [g.cell_node("")],
    )


def unmatched_parameter_patterns(ctx: AuditContext, patterns: list[str], field: str) -> Iterator[Finding]:
    """Errors for the patterns of ``Spec.<field>`` that match no parameter name."""
    names = [param.name for _, param in ctx.parameters()]
    for pattern in patterns:
        if any(matches_any((pattern,), name) for name in names):
            continue
        yield ctx.finding(
            "error",
            pattern,
            f"Spec.{field}{_source(ctx)} names {pattern!r}, which matches no parameter of the network, so the "
            f"declaration does nothing.{close_list(pattern.rstrip('*.'), names)}",
            "Fix the pattern: parameter names are Parameter.name values such as 'backbone.conv1.weight'; "
            "globs use fnmatch ('backbone.*').",
            [g.cell_node("")],
        )

"""Tied parameters and declared patterns that match nothing (shared by GA1xx, GA2xx, GA3xx).

Example:
    >>> from mindspore import nn
    >>> from graphaudit.checks.context import AuditContext
    >>> a, b = nn.Dense(2, 2), nn.Dense(2, 2)
    >>> b.weight = a.weight
    >>> [paths for _, _, paths in tied_parameters(AuditContext.build(nn.SequentialCell([a, b])))]
    [['0.weight', '1.weight']]
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphaudit import graph as g

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = ["network_node", "tied_parameters"]


def tied_parameters(ctx: AuditContext) -> Iterator[tuple[str, list[str], list[str]]]:
    """``(node, owner cell nodes, attribute paths)`` for every parameter held by several owners.

    A parameter is tied when more than one ``owns`` edge reaches it: several cells (or one
    cell under several attribute names) hold the same Parameter object. A parameter that is
    only reachable twice because its cell is shared is not listed here (that is cell sharing).
    """
    for node, _ in g.nodes_of_kind(ctx.graph, g.PARAMETER):
        owners = g.owners_of(ctx.graph, node)
        if len(owners) > 1:
            yield node, list(dict.fromkeys(owners)), g.node_paths(ctx.graph, node)


def network_node(ctx: AuditContext, param: object) -> str | None:
    """The graph node of *param*, also when it is the lazily initialised twin the graph holds."""
    node = ctx.parameter_node(param)
    inited = getattr(param, "inited_param", None)
    if node is None and inited is not None:
        node = ctx.parameter_node(inited)
    return node

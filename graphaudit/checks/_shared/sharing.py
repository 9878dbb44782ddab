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

from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING

from graphaudit import graph as g
from graphaudit.checks._shared.grouping import pattern
from graphaudit.text import listing

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = ["Tie", "network_node", "tie_groups", "tied_parameters", "ties_described"]


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


Tie = tuple[str, list[str], list[str]]  # a tied parameter's node, owner cell nodes, attribute paths


def tie_groups(ctx: AuditContext, ties: Iterable[Tie]) -> list[list[Tie]]:
    """*ties* gathered by cause: the ties between the same cells of blocks built alike are one group.

    ``self.decoder.weight = self.embed.embedding_table`` in a block's constructor ties one
    parameter in every block (owners ``blocks.0.embed`` and ``blocks.0.decoder``, then
    ``blocks.1...``); a weight and a bias tied between the same two layers are one group too.
    """
    groups: dict[tuple[str, ...], list[Tie]] = {}
    for tie in ties:
        groups.setdefault(tuple(pattern(ctx.cell_path(owner)) for owner in tie[1]), []).append(tie)
    return list(groups.values())


def ties_described(names: Sequence[str], paths: Sequence[str], owners: Sequence[str]) -> str:
    """``N parameters (a, b...) are each one Parameter object held under several paths (first: ...)``.

    *names* are the tied parameters, *paths* the attribute paths of the first and *owners* the
    paths of the cells that hold it.

    Example:
        >>> ties_described(["0.w", "1.w"], ["0.a.w", "0.b.w"], ["0.a", "0.b"])
        '2 parameters (0.w and 1.w) are each one Parameter object held under several paths (the first under 0.a.w and 0.b.w, by 0.a and 0.b)'
    """
    return (
        f"{len(names)} parameters ({listing(names)}) are each one Parameter object held under several paths "
        f"(the first under {listing(paths, None)}, by {listing(owners, None)})"
    )


def network_node(ctx: AuditContext, param: object) -> str | None:
    """The graph node of *param*, also when it is the lazily initialised twin the graph holds."""
    node = ctx.parameter_node(param)
    inited = getattr(param, "inited_param", None)
    if node is None and inited is not None:
        node = ctx.parameter_node(inited)
    return node

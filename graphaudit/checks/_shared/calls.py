"""Which cells the traced forward pass never reached (shared by GA301 and GA302).

Example:
    >>> import numpy as np
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.checks.context import AuditContext
    >>> class Net(nn.Cell):
    ...     def __init__(self):
    ...         super().__init__()
    ...         self.used, self.spare = nn.Dense(2, 2), nn.Dense(2, 2)
    ...     def construct(self, x):
    ...         return self.used(x)
    >>> never_called_cells(AuditContext.build(Net(), inputs=Tensor(np.ones((1, 2), np.float32))))
    ['cell:spare']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphaudit import graph as g

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = ["never_called_cells"]


def _children(ctx: AuditContext, cell_node: str) -> list[str]:
    return [t for _, t, d in ctx.graph.out_edges(cell_node, data=True) if d["kind"] == g.CONTAINS]


def _parents(ctx: AuditContext, cell_node: str) -> list[str]:
    return [s for s, _, d in ctx.graph.in_edges(cell_node, data=True) if d["kind"] == g.CONTAINS]


def _used(ctx: AuditContext, cell_node: str, memo: dict[str, tuple[bool, bool]]) -> tuple[bool, bool]:
    """``(used, holds_parameters)`` for a cell and everything inside it.

    *used*: the cell or a cell inside it was called, or one of their parameters was read.
    """
    if cell_node in memo:
        return memo[cell_node]
    memo[cell_node] = (True, False)  # a containment cycle: assume used, never report it
    graph = ctx.graph
    used = bool(g.calls_of(graph, cell_node))
    params = [t for _, t, d in graph.out_edges(cell_node, data=True) if d["kind"] == g.OWNS]
    holds = bool(params)
    used = used or any(d["kind"] == g.READS for p in params for _, _, d in graph.out_edges(p, data=True))
    for child in _children(ctx, cell_node):
        child_used, child_holds = _used(ctx, child, memo)
        used, holds = used or child_used, holds or child_holds
    memo[cell_node] = (used, holds)
    return used, holds


def never_called_cells(ctx: AuditContext) -> list[str]:
    """The outermost cell nodes holding parameters that the traced pass never touched.

    A cell is reported when neither it nor any cell inside it was called and none of their
    parameters was read; a cell inside one already reported is not reported again.
    """
    memo: dict[str, tuple[bool, bool]] = {}
    idle = set()
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        used, holds = _used(ctx, node, memo)
        if holds and not used:
            idle.add(node)
    return [
        node
        for node, _ in g.nodes_of_kind(ctx.graph, g.CELL)
        if node in idle and not any(parent in idle for parent in _parents(ctx, node))
    ]

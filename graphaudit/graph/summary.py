"""A short plain-text description of a captured graph.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> block = nn.Dense(4, 4)
    >>> print(graphaudit.summarize(graphaudit.to_networkx(nn.SequentialCell([block, block]))))
    SequentialCell: 2 cells, 2 parameters (20 elements, 20 trainable)
    shared cells:
      0 = 1  (Dense)
"""

from __future__ import annotations

from collections import Counter

import networkx as nx

from graphaudit import graph as g
from graphaudit.errors import ArgumentTypeError
from graphaudit.errors.arguments import checked_call

__all__ = ["summarize"]


@checked_call
def summarize(graph: nx.MultiDiGraph) -> str:
    """Describe *graph* in a few lines: sizes, sharing, and the traced forward pass.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> print(summarize(graphaudit.to_networkx(nn.Dense(2, 3))))
        Dense: 1 cells, 2 parameters (9 elements, 9 trainable)
    """
    if not isinstance(graph, nx.MultiDiGraph) or "graphaudit_version" not in graph.graph:
        what = type(graph).__name__
        hint = "summarize(graphaudit.to_networkx(net))"
        if not hasattr(graph, "cells_and_names"):
            hint += " or summarize(report.graph)"
        raise ArgumentTypeError(
            f"summarize() expects a graph captured by graphaudit, got {what}: write {hint}"
        )
    cells = list(g.nodes_of_kind(graph, g.CELL))
    params = list(g.nodes_of_kind(graph, g.PARAMETER))
    numel = sum(d["numel"] for _, d in params)
    trainable = sum(d["numel"] for _, d in params if d["requires_grad"])
    lines = [
        f"{graph.graph.get('name', 'network')}: {len(cells)} cells, {len(params)} parameters "
        f"({numel:,} elements, {trainable:,} trainable)"
    ]
    shared = [(n, d) for n, d in cells if len(g.node_paths(graph, n)) > 1]
    if shared:
        lines.append("shared cells:")
        lines += [f"  {' = '.join(g.node_paths(graph, n))}  ({d['class_name']})" for n, d in shared]
    tied = [n for n, _ in params if len(g.owners_of(graph, n)) > 1]
    if tied:
        lines.append("tied parameters:")
        lines += [f"  {' = '.join(g.node_paths(graph, n))}" for n in tied]
    if graph.graph.get("traced"):
        lines += _forward_lines(graph)
    return "\n".join(lines)


def _forward_lines(graph: nx.MultiDiGraph) -> list[str]:
    def shapes(kind: str) -> str:
        return ", ".join(f"{d['shape']} {d['dtype']}" for _, d in g.nodes_of_kind(graph, kind)) or "none"

    calls = list(g.nodes_of_kind(graph, g.CALL))
    per_cell = Counter(d["cell"] for _, d in calls if d["cell"])
    op_types = Counter(d["op_type"] for _, d in g.nodes_of_kind(graph, g.OP))
    lines = [
        f"forward pass: inputs {shapes(g.INPUT)} -> outputs {shapes(g.OUTPUT)}",
        f"  {len(calls)} calls of {len(per_cell)} cells, {sum(op_types.values())} operations between cells",
    ]
    repeated = [(cell, n) for cell, n in per_cell.items() if n > 1]
    if repeated:
        listed = ", ".join(f"{graph.nodes[c]['path'] or '(root)'} x{n}" for c, n in repeated[:8])
        more = f" and {len(repeated) - 8} more" if len(repeated) > 8 else ""
        lines.append(f"  cells called more than once: {listed}{more}")
    if op_types:
        lines.append("  operations: " + ", ".join(f"{t} x{n}" for t, n in op_types.most_common()))
    return lines

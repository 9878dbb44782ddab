"""The design a captured graph shows: what :meth:`Spec.from_net <graphaudit.spec.Spec.from_net>` records.

:func:`observed_design` reads a graph from :func:`graphaudit.to_networkx` and returns the
keyword arguments of :class:`~graphaudit.spec.Spec` for the design it shows: the frozen
parameters, the tied parameters, the shared cells and, when one forward pass was traced,
the connections and call counts. ``Spec.from_graph(graph)`` is ``Spec(**observed_design(graph))``.
Every name is stored as an exact-match pattern (:func:`~graphaudit.spec.escape`). This module
imports NetworkX; ``import graphaudit.spec`` does not (it is loaded on first use).

Example:
    >>> import numpy as np, graphaudit
    >>> from mindspore import nn, Tensor
    >>> block = nn.Dense(4, 4)
    >>> graph = graphaudit.to_networkx(nn.SequentialCell([block] * 3), inputs=Tensor(np.ones((1, 4), np.float32)))
    >>> design = observed_design(graph)
    >>> design["shared_cells"], design["calls"]
    ([['0', '1', '2']], {'0': 3})
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import networkx as nx

from graphaudit import graph as g
from graphaudit.graph.connectivity import direct_connections
from graphaudit.spec.patterns import escape

__all__ = ["observed_design"]


def _holds_parameters(graph: nx.MultiDiGraph, cell: str) -> bool:
    if graph.nodes[cell]["n_params"] > 0:
        return True
    return any(
        _holds_parameters(graph, child)
        for _, child, data in graph.out_edges(cell, data=True)
        if data["kind"] == g.CONTAINS
    )


def observed_design(
    graph: nx.MultiDiGraph,
    *,
    depth: int | None = 1,
    connection_paths: Sequence[str] = (),
    call_paths: Sequence[str] = (),
) -> dict[str, Any]:
    """The ``Spec`` keyword arguments of the design the captured *graph* shows.

    - ``frozen``: the name of every parameter with ``requires_grad=False``;
    - ``shared_parameters``: every path of each parameter held by more than one cell;
    - ``shared_cells``: every path of each cell (holding parameters) under several paths;
    - on a traced graph only: ``expected_connections``, the direct connections among the
      cells *depth* levels down (``None``: none of them) and the cells of
      *connection_paths*, with ``exhaustive_connections``; and ``calls``, the call count of
      those cells, of every cell called more than once (a shared cell once, under its first
      path) and of each path of *call_paths*.

    Example:
        >>> import numpy as np, graphaudit
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU(), nn.Dense(4, 2)])
        >>> net[0].weight.requires_grad = False
        >>> graph = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> design = observed_design(graph, depth=None, connection_paths=["0", "2"], call_paths=["1"])
        >>> design["frozen"], design["expected_connections"], design["calls"]
        (['0.weight'], [], {'1': 1})
        >>> observed_design(graph)["expected_connections"]
        [('0', '1'), ('1', '2')]
    """
    frozen = sorted(d["name"] for _, d in g.nodes_of_kind(graph, g.PARAMETER) if not d["requires_grad"])
    design: dict[str, Any] = {
        "frozen": [escape(name) for name in frozen],
        "shared_parameters": [
            [escape(p) for p in g.node_paths(graph, node)]
            for node, _ in g.nodes_of_kind(graph, g.PARAMETER)
            if len(g.owners_of(graph, node)) > 1
        ],
        "shared_cells": [
            [escape(p) for p in g.node_paths(graph, node)]
            for node, _ in g.nodes_of_kind(graph, g.CELL)
            if len(g.node_paths(graph, node)) > 1 and _holds_parameters(graph, node)
        ],
    }
    if not graph.graph.get("traced"):
        return design

    by_path = g.cell_nodes_by_path(graph)
    # the path each call count is listed under -> its cell node; a cell is listed once,
    # except under each path asked for in *call_paths*
    keyed = {path: by_path[path] for path in call_paths if path in by_path}
    listed = set(keyed.values())

    def note(node: str, path: str) -> None:
        if node not in listed:
            keyed[path] = node
            listed.add(node)

    paths = list(connection_paths)
    if depth is not None:
        level = [p for p in by_path if p and len(p.split(".")) == depth]
        paths += level
        for path in level:
            note(by_path[path], path)
    for node, attrs in g.nodes_of_kind(graph, g.CELL):
        if len(g.calls_of(graph, node)) > 1:
            note(node, attrs["path"])
    paths = list(dict.fromkeys(paths))
    connections = sorted(direct_connections(graph, paths)) if paths else []
    design["expected_connections"] = [(escape(a), escape(b)) for a, b in connections]
    design["exhaustive_connections"] = True
    design["calls"] = {escape(path): len(g.calls_of(graph, node)) for path, node in keyed.items()}
    return design

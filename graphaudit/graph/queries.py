"""Queries on a captured graph, and the encoding of list-valued attributes.

Every attribute value is a ``str``, ``int``, ``float`` or ``bool`` so that the graph can be
written as it is with ``networkx.write_graphml``; lists are stored as JSON text
(:func:`to_json_list`, :func:`shape_json`) and read back with :func:`node_paths` /
:func:`shape_of`.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> g = graphaudit.to_networkx(nn.Dense(4, 2))
    >>> [n for n, _ in nodes_of_kind(g, "parameter")]
    ['param:weight', 'param:bias']
"""

from __future__ import annotations

import functools
import json
import re
from collections.abc import Iterable, Iterator
from typing import Any

import networkx as nx

from graphaudit.graph.schema import CELL, EDGE_KINDS, INVOKES, NODE_KINDS, OWNS, PARAMETER

__all__ = [
    "calls_of",
    "cell_nodes_by_path",
    "compiled_cells",
    "compiled_functions",
    "edges_in",
    "edges_of_kind",
    "edges_out",
    "node_paths",
    "nodes_of_kind",
    "owners_of",
    "parameter_nodes_by_name",
    "shape_json",
    "shape_of",
    "to_json_list",
]

_PLAIN_TEXT = re.compile(r"[A-Za-z0-9_.\-]*")


def to_json_list(values: Iterable[Any]) -> str:
    """Encode a list attribute as JSON text, the form GraphML can store.

    Example:
        >>> print(to_json_list(["layer1.0", "heads['cls']"]))
        ["layer1.0", "heads['cls']"]
    """
    items = list(values)
    # Attribute paths are nearly always plain: skip the json module's cost for those.
    if all(isinstance(v, str) and _PLAIN_TEXT.fullmatch(v) for v in items):
        return "[" + ", ".join(f'"{v}"' for v in items) + "]"
    return json.dumps(items, ensure_ascii=False)


def shape_json(shape: Iterable[int]) -> str:
    """A shape as JSON text, without the cost of the json module (shapes are only ints).

    Example:
        >>> shape_json((2, 3))
        '[2, 3]'
    """
    return _shape_text(shape if type(shape) is tuple else tuple(shape))


@functools.lru_cache(maxsize=8192)
def _shape_text(shape: tuple[int, ...]) -> str:
    # Every traced tensor's shape is written as text (~1,000 an audit of resnet50, few distinct).
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


def compiled_functions(cell: dict[str, Any]) -> list[str]:
    """The ``jit`` functions the code of a cell node (its attribute dict) calls.

    Example:
        >>> compiled_functions({"kind": "cell", "jit_functions": '["relative_bias"]'})
        ['relative_bias']
    """
    return list(json.loads(cell.get("jit_functions", "[]")))


def compiled_cells(graph: nx.MultiDiGraph) -> list[dict[str, str]]:
    """What the user compiles: ``{"path", "what", "how"}`` per compiled ``construct`` or ``jit`` function.

    ``how`` is ``"jit"`` (``mindspore.jit``) or ``"graph-mode"`` (the network called in a
    script set to ``GRAPH_MODE``); ``what`` is ``Class.construct`` or the function's name.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> compiled_cells(graphaudit.to_networkx(nn.Dense(4, 2)))
        []
    """
    found = []
    for _, data in sorted(graph.nodes(data=True), key=lambda item: str(item[1].get("path", ""))):
        if data["kind"] != CELL:
            continue
        if data.get("compiled"):
            found.append(
                {"path": data["path"], "what": f"{data['class_name']}.construct", "how": data["compiled"]}
            )
        found.extend({"path": data["path"], "what": name, "how": "jit"} for name in compiled_functions(data))
    return found


def node_paths(graph: nx.MultiDiGraph, node: str) -> list[str]:
    """Every path under which a cell or parameter node is reachable.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> block = nn.Dense(2, 2)
        >>> g = graphaudit.to_networkx(nn.SequentialCell([block, block]))
        >>> node_paths(g, "cell:0")
        ['0', '1']
    """
    return list(_parsed(graph.nodes[node]["paths"]))


def shape_of(attrs: dict[str, Any]) -> tuple[int, ...]:
    """The shape stored (as JSON text) in a node's or an edge's attributes.

    Example:
        >>> shape_of({"shape": "[2, 3]"})
        (2, 3)
    """
    return _parsed(attrs["shape"])


@functools.lru_cache(maxsize=8192)
def _parsed(text: str) -> tuple[Any, ...]:
    # The checks of one audit read the same few hundred shapes and paths thousands of times
    # (~900 json.loads an audit of resnet50); a tuple, so no reader can change another's.
    return tuple(json.loads(text))


def edges_in(graph: nx.MultiDiGraph, node: str, kind: str) -> list[tuple[str, dict[str, Any]]]:
    """``(source, attributes)`` of every edge of one kind into *node*, in insertion order.

    What ``graph.in_edges(node, data=True)`` filtered by kind gives, read from the adjacency
    itself: networkx's edge views cost ~10 us a call, and the checks of one audit of resnet50
    ask a few thousand times.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> edges_in(graphaudit.to_networkx(nn.Dense(4, 2)), "param:bias", "owns")
        [('cell:', {'kind': 'owns', 'name': 'bias'})]
    """
    return [
        (source, data)
        for source, keyed in graph._pred[node].items()
        for data in keyed.values()
        if data["kind"] == kind
    ]


def edges_out(graph: nx.MultiDiGraph, node: str, kind: str) -> list[tuple[str, dict[str, Any]]]:
    """``(target, attributes)`` of every edge of one kind out of *node*, in insertion order (see :func:`edges_in`).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> [target for target, _ in edges_out(graphaudit.to_networkx(nn.Dense(4, 2)), "cell:", "owns")]
        ['param:weight', 'param:bias']
    """
    return [
        (target, data)
        for target, keyed in graph._succ[node].items()
        for data in keyed.values()
        if data["kind"] == kind
    ]


def nodes_of_kind(graph: nx.MultiDiGraph, kind: str) -> Iterator[tuple[str, dict[str, Any]]]:
    """``(node, attributes)`` for every node of one kind, in insertion order.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> g = graphaudit.to_networkx(nn.Dense(4, 2))
        >>> [n for n, _ in nodes_of_kind(g, "parameter")]
        ['param:weight', 'param:bias']
    """
    if kind not in NODE_KINDS:
        raise ValueError(f"unknown node kind {kind!r}; the kinds are {sorted(NODE_KINDS)}")
    return ((n, d) for n, d in graph.nodes(data=True) if d["kind"] == kind)


def edges_of_kind(graph: nx.MultiDiGraph, kind: str) -> Iterator[tuple[str, str, dict[str, Any]]]:
    """``(source, target, attributes)`` for every edge of one kind, in insertion order.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> g = graphaudit.to_networkx(nn.Dense(4, 2))
        >>> [(s, t) for s, t, _ in edges_of_kind(g, "owns")]
        [('cell:', 'param:weight'), ('cell:', 'param:bias')]
    """
    if kind not in EDGE_KINDS:
        raise ValueError(f"unknown edge kind {kind!r}; the kinds are {sorted(EDGE_KINDS)}")
    return ((s, t, d) for s, t, d in graph.edges(data=True) if d["kind"] == kind)


def cell_nodes_by_path(graph: nx.MultiDiGraph) -> dict[str, str]:
    """Map every path of every cell (all of a shared cell's paths) to its node.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> g = graphaudit.to_networkx(nn.SequentialCell([nn.ReLU()]))
        >>> cell_nodes_by_path(g)
        {'': 'cell:', '0': 'cell:0'}
    """
    return {path: node for node, _ in nodes_of_kind(graph, CELL) for path in node_paths(graph, node)}


def parameter_nodes_by_name(graph: nx.MultiDiGraph) -> dict[str, list[str]]:
    """Map each ``Parameter.name`` to its node(s); two nodes under one name is a name clash.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> parameter_nodes_by_name(graphaudit.to_networkx(nn.Dense(4, 2)))
        {'weight': ['param:weight'], 'bias': ['param:bias']}
    """
    by_name: dict[str, list[str]] = {}
    for node, attrs in nodes_of_kind(graph, PARAMETER):
        by_name.setdefault(attrs["name"], []).append(node)
    return by_name


def calls_of(graph: nx.MultiDiGraph, cell: str) -> list[str]:
    """The call nodes of one cell node, in call order (empty without a traced pass).

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> g = graphaudit.to_networkx(nn.Dense(4, 2), inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> calls_of(g, "cell:")
        ['call:#1']
    """
    calls = [source for source, _ in edges_in(graph, cell, INVOKES)]
    return sorted(calls, key=lambda node: graph.nodes[node]["order"])


def owners_of(graph: nx.MultiDiGraph, parameter: str) -> list[str]:
    """The cell nodes that hold a parameter node as a direct attribute.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> owners_of(graphaudit.to_networkx(nn.Dense(4, 2)), "param:bias")
        ['cell:']
    """
    return [source for source, _ in edges_in(graph, parameter, OWNS)]

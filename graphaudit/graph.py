"""The graph data model: the closed vocabulary of node and edge kinds, and queries on it.

A graph made by :func:`graphaudit.to_networkx` is a ``networkx.MultiDiGraph``. Every node
and every edge has a ``kind`` attribute taken from :data:`NODE_KINDS` / :data:`EDGE_KINDS`;
nothing else ever appears there, so code that reads the graph can rely on an exhaustive
``match``/``if`` over kinds.

Node kinds
----------
``cell``
    One per ``nn.Cell`` *object* in the network tree. A cell reachable under several paths
    (``nn.SequentialCell([block] * 3)``) is still one node. Attributes: ``path`` (the first
    path, ``""`` for the root), ``paths`` (JSON list of every path), ``class_name``,
    ``module``, ``training`` (bool), ``n_children``, ``n_params`` (direct parameters).
``parameter``
    One per ``Parameter`` *object*: a tied parameter is one node owned by several cells.
    Attributes: ``name`` (``Parameter.name``), ``path`` / ``paths`` (attribute paths),
    ``shape`` (JSON list), ``dtype``, ``requires_grad``, ``numel``.
``call``
    One per call of a cell during the traced forward pass (only with ``inputs``): a cell
    called twice gives two call nodes, each ``invokes`` the one cell node. Attributes:
    ``cell`` (the cell node, ``""`` for a cell outside the network tree), ``path``,
    ``class_name``, ``index`` (1 for the first call of that cell), ``order`` (global order),
    ``leaf`` (the cell has no sub-cells, and is not the network itself: what happens inside
    it is not traced further).
``op``
    A functional operation or tensor method executed between cells (``x + y``,
    ``ops.cat``, ``ops.sigmoid``, ``x.reshape``...). Attributes: ``op`` (as called, e.g.
    ``Tensor.__add__``, ``ops.sigmoid``, ``Prim.Sigmoid``), ``op_type`` (normalised
    snake case, e.g. ``add``, ``sigmoid``), ``scope`` (path of the enclosing call), ``order``.
``input`` / ``output``
    The tensors passed to the network and the tensors it returned, in flattened order.
    Attributes: ``index``, ``shape``, ``dtype``.

Edge kinds
----------
``contains``  cell → cell, attribute ``name`` (attribute name or container key).
``owns``      cell → parameter, attribute ``name`` (attribute name in that cell).
``invokes``   call → cell.
``encloses``  call → call | op: the callee ran inside that call.
``flows``     input | call | op → call | op | output: a tensor produced by the source was
              consumed by the target. Attributes: ``shape``, ``dtype``, ``src_slot``,
              ``dst_slot`` (positions in the flattened outputs / inputs).
``reads``     parameter → call | op: the parameter was passed to an operation run by
              that call (or to that op).

Every attribute value is a ``str``, ``int``, ``float`` or ``bool`` so that the graph can
be written as it is with ``networkx.write_graphml``; lists are stored as JSON text and
read back with :func:`node_paths` / :func:`shape_of`.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> g = graphaudit.to_networkx(nn.Dense(4, 2))
    >>> sorted({d["kind"] for _, d in g.nodes(data=True)})
    ['cell', 'parameter']
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from typing import Any, Final

import networkx as nx

__all__ = [
    "CALL",
    "CELL",
    "CONTAINS",
    "EDGE_KINDS",
    "ENCLOSES",
    "FLOWS",
    "INPUT",
    "INVOKES",
    "NODE_KINDS",
    "OP",
    "OUTPUT",
    "OWNS",
    "PARAMETER",
    "READS",
    "calls_of",
    "cell_node",
    "cell_nodes_by_path",
    "edges_of_kind",
    "node_paths",
    "nodes_of_kind",
    "owners_of",
    "parameter_nodes_by_name",
    "shape_of",
]

CELL: Final = "cell"
PARAMETER: Final = "parameter"
CALL: Final = "call"
OP: Final = "op"
INPUT: Final = "input"
OUTPUT: Final = "output"

CONTAINS: Final = "contains"
OWNS: Final = "owns"
INVOKES: Final = "invokes"
ENCLOSES: Final = "encloses"
FLOWS: Final = "flows"
READS: Final = "reads"

NODE_KINDS: Final = frozenset({CELL, PARAMETER, CALL, OP, INPUT, OUTPUT})
EDGE_KINDS: Final = frozenset({CONTAINS, OWNS, INVOKES, ENCLOSES, FLOWS, READS})


def cell_node(path: str) -> str:
    """Node id of the cell whose first path is *path* (``""`` is the root).

    Example:
        >>> cell_node("layer1.0")
        'cell:layer1.0'
    """
    return f"cell:{path}"


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
    return "[" + ", ".join(str(int(d)) for d in shape) + "]"


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
    return list(json.loads(graph.nodes[node]["paths"]))


def shape_of(attrs: dict[str, Any]) -> tuple[int, ...]:
    """The shape stored (as JSON text) in a node's or an edge's attributes.

    Example:
        >>> shape_of({"shape": "[2, 3]"})
        (2, 3)
    """
    return tuple(json.loads(attrs["shape"]))


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
    calls = [s for s, _, d in graph.in_edges(cell, data=True) if d["kind"] == INVOKES]
    return sorted(calls, key=lambda node: graph.nodes[node]["order"])


def owners_of(graph: nx.MultiDiGraph, parameter: str) -> list[str]:
    """The cell nodes that hold a parameter node as a direct attribute.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> owners_of(graphaudit.to_networkx(nn.Dense(4, 2)), "param:bias")
        ['cell:']
    """
    return [s for s, _, d in graph.in_edges(parameter, data=True) if d["kind"] == OWNS]

"""Node ids: how each kind of node of the graph is named.

Ids are readable and stable for the same network: ``cell:<first path>``,
``param:<Parameter.name>``, ``call:<path>#<n>``, ``op:<scope>/<op type>#<n>``,
``input:<i>``, ``output:<i>``. A clash (two parameters named alike) gets ``~2``, ``~3``...
(:func:`unique_node_id`).

Example:
    >>> cell_node("layer1.0"), parameter_node("fc.weight"), call_node("fc", 2)
    ('cell:layer1.0', 'param:fc.weight', 'call:fc#2')
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import networkx as nx

__all__ = [
    "call_node",
    "cell_node",
    "input_node",
    "op_node",
    "output_node",
    "parameter_node",
    "unique_node_id",
]


def cell_node(path: str) -> str:
    """Node id of the cell whose first path is *path* (``""`` is the root).

    Example:
        >>> cell_node("layer1.0")
        'cell:layer1.0'
    """
    return f"cell:{path}"


def parameter_node(name: str) -> str:
    """Node id of the parameter called *name* (before any clash suffix).

    Example:
        >>> parameter_node("head.bias")
        'param:head.bias'
    """
    return f"param:{name}"


def call_node(path: str, index: int) -> str:
    """Node id of the *index*-th call (1-based) of the cell at *path*.

    Example:
        >>> call_node("", 1)
        'call:#1'
    """
    return f"call:{path}#{index}"


def op_node(scope: str, op_type: str, order: int) -> str:
    """Node id of the *order*-th traced operation, run in the construct of cell *scope*.

    Example:
        >>> op_node("body", "add", 3)
        'op:body/add#3'
    """
    return f"op:{scope}/{op_type}#{order}"


def input_node(index: int) -> str:
    """Node id of the network's *index*-th input tensor (flattened order).

    Example:
        >>> input_node(0)
        'input:0'
    """
    return f"input:{index}"


def output_node(index: int) -> str:
    """Node id of the network's *index*-th output tensor (flattened order).

    Example:
        >>> output_node(0)
        'output:0'
    """
    return f"output:{index}"


def unique_node_id(graph: nx.MultiDiGraph, wanted: str) -> str:
    """*wanted*, or ``wanted~2``, ``wanted~3``... the first id not yet in *graph*.

    Example:
        >>> import networkx as nx
        >>> graph = nx.MultiDiGraph()
        >>> graph.add_node("param:w")
        >>> unique_node_id(graph, "param:w"), unique_node_id(graph, "param:b")
        ('param:w~2', 'param:b')
    """
    if wanted not in graph:
        return wanted
    suffix = 2
    while f"{wanted}~{suffix}" in graph:
        suffix += 1
    return f"{wanted}~{suffix}"

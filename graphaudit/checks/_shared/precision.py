"""Which computations of the traced pass ran in float16.

Example:
    >>> is_normalization("BatchNorm2d"), is_normalization("Dense")
    (True, False)
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphaudit import graph as g

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["HALF", "is_normalization", "output_dtypes"]

HALF = "Float16"
_NORMS = ("BatchNorm", "LayerNorm", "GroupNorm", "InstanceNorm", "RMSNorm")


def is_normalization(class_name: str) -> bool:
    """A normalisation cell, by class name (MindSpore's, mint's, and the zoos' ``*BatchNorm*``)."""
    return any(norm in class_name for norm in _NORMS)


def output_dtypes(graph: nx.MultiDiGraph, node: str) -> set[str]:
    """The dtypes of the tensors *node* (a call or an op) produces, as the trace recorded them."""
    return {d.get("dtype", "") for _, d in g.edges_out(graph, node, g.FLOWS)}

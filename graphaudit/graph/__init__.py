"""The graph data model, in one place: the vocabulary, node ids, and queries.

- :mod:`graphaudit.graph.schema`: the closed vocabulary of node and edge kinds, and the
  attributes of each (read its docstring first);
- :mod:`graphaudit.graph.ids`: how nodes are named (``cell:layer1.0``, ``param:fc.weight``...);
- :mod:`graphaudit.graph.queries`: lookups every stage uses (:func:`nodes_of_kind`,
  :func:`node_paths`, :func:`calls_of`...);
- :mod:`graphaudit.graph.connectivity`: which cells feed which, on a traced graph;
- :mod:`graphaudit.graph.summary`: a short text description of a graph.

Everything here works on a plain ``networkx.MultiDiGraph`` and never imports MindSpore.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> g = graphaudit.to_networkx(nn.Dense(4, 2))
    >>> sorted({d["kind"] for _, d in g.nodes(data=True)})
    ['cell', 'parameter']
"""

from __future__ import annotations

from graphaudit.graph.ids import (
    call_node,
    cell_node,
    input_node,
    op_node,
    output_node,
    parameter_node,
    unique_node_id,
)
from graphaudit.graph.queries import (
    calls_of,
    cell_nodes_by_path,
    compiled_cells,
    compiled_functions,
    edges_in,
    edges_of_kind,
    edges_out,
    node_paths,
    nodes_of_kind,
    owners_of,
    parameter_nodes_by_name,
    shape_json,
    shape_of,
    to_json_list,
)
from graphaudit.graph.schema import (
    CALL,
    CELL,
    CONTAINS,
    EDGE_KINDS,
    ENCLOSES,
    FLOWS,
    INPUT,
    INVOKES,
    NODE_KINDS,
    OP,
    OUTPUT,
    OWNS,
    PARAMETER,
    READS,
)

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
    "call_node",
    "calls_of",
    "cell_node",
    "cell_nodes_by_path",
    "compiled_cells",
    "compiled_functions",
    "edges_in",
    "edges_of_kind",
    "edges_out",
    "input_node",
    "node_paths",
    "nodes_of_kind",
    "op_node",
    "output_node",
    "owners_of",
    "parameter_node",
    "parameter_nodes_by_name",
    "shape_json",
    "shape_of",
    "to_json_list",
    "unique_node_id",
]

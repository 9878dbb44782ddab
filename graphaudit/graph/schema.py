"""The closed vocabulary of the graph: its node and edge kinds, and the attributes of each.

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
    ``module``, ``training`` (bool), ``n_children``, ``n_params`` (direct parameters),
    ``compiled`` (``"jit"`` when the user compiles its ``construct`` with ``mindspore.jit``,
    ``"graph-mode"`` on the network when the script runs in ``GRAPH_MODE``, else ``""``),
    ``jit_functions`` (JSON list of the ``jit`` functions its class's code calls; read it
    with :func:`~graphaudit.graph.queries.compiled_functions`). The traced pass runs what
    they compile as Python (``MS_JIT=0``), so it is part of the graph.
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
    The call of a cell whose body is traced although it has no sub-cells (a loss inside a
    network-with-loss) also has ``args``: JSON ``[[argument, producer, slot], ...]``, the
    producer node (``""`` when unseen) of each tensor of its positional arguments.
``op``
    A functional operation or tensor method executed between cells (``x + y``,
    ``ops.cat``, ``ops.sigmoid``, ``x.reshape``...). Attributes: ``op`` (as called, e.g.
    ``Tensor.__add__``, ``ops.sigmoid``, ``Prim.Sigmoid``), ``op_type`` (normalised
    snake case, e.g. ``add``, ``sigmoid``), ``scope`` (path of the enclosing call), ``order``.
    An operation that only moves values (``ops.concat``, ``x[...]``, ``ops.split``,
    ``x.transpose``, ``x.view``...) also has ``layout`` when its arguments could be read:
    JSON telling where each element of its outputs comes from in its inputs (see
    :mod:`graphaudit.capture.network.layout`).
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

from typing import Final

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

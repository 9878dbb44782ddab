"""What makes the network's output: the activation that ends the backbone (shared by the GA4xx checks).

:func:`output_activation` starts at ``output:0`` and walks back through shape-only
operations (``reshape``, ``view``, ``squeeze``, ``transpose``, ``cast``, ``x[...]``...) and
pass-through cells (``nn.Flatten``, ``nn.Identity``, ``nn.Dropout``) to the node that made
the values, and says ``"sigmoid"``, ``"softmax"``, ``"log_softmax"``, ``"none"`` (unbounded
logits: a MindSpore layer such as ``Dense``/``Conv2d`` or an affine operation) or
``"unknown"`` (what made the values is not visible: a user-written leaf cell, an operation
the tracer cannot see, or a bounded operation such as ``exp`` or ``tanh``).
:func:`output_parts` / :func:`origins` tell an output put together from parts (an
``ops.concat`` of a box and a class branch) part by part, following the ``layout`` the
tracer records on index-moving operations.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> net = nn.SequentialCell([nn.Dense(4, 1, activation="sigmoid"), nn.Flatten()])
    >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((2, 4), np.float32)))
    >>> output_activation(g)
    ('sigmoid', 'call:0.activation#1')
"""

from __future__ import annotations

from typing import Any, Final

import networkx as nx
import numpy as np

from graphaudit import graph as g
from graphaudit.checks._shared import regions

__all__ = [
    "ACTIVATIONS",
    "ACTIVATION_CELLS",
    "NORMALISATIONS",
    "PASS_THROUGH_CELLS",
    "SHAPE_ONLY_OPS",
    "describe_node",
    "origins",
    "output_activation",
    "output_parts",
]

ACTIVATIONS: Final = ("sigmoid", "softmax", "log_softmax", "none", "unknown")
NORMALISATIONS: Final = frozenset({"sigmoid", "softmax", "log_softmax"})

# Operations that move or retype values without changing them (op_type as the tracer
# normalises it; ``x.T`` is recorded as ``permute``, ``x[...]`` as ``getitem``).
SHAPE_ONLY_OPS: Final = frozenset(
    {
        "reshape",
        "view",
        "viewas",
        "flatten",
        "squeeze",
        "unsqueeze",
        "expanddims",
        "transpose",
        "permute",
        "swapaxes",
        "swapdims",
        "movedim",
        "contiguous",
        "cast",
        "astype",
        "to",
        "float",
        "half",
        "double",
        "getitem",
        "identity",
        "clone",
    }
)
# Cells that hand their input on unchanged in value (Dropout rescales, but keeps the sign
# and the unboundedness of logits; at inference it is the identity). A SequentialCell is a
# leaf call only when it is empty, and then returns its input.
PASS_THROUGH_CELLS: Final = frozenset(
    {"Flatten", "Unflatten", "Identity", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "SequentialCell"}
)
ACTIVATION_CELLS: Final = {"Sigmoid": "sigmoid", "Softmax": "softmax", "LogSoftmax": "log_softmax"}
# ``mint.nn.functional.softmax`` is recorded as ``softmaxext``.
ACTIVATION_OPS: Final = {
    "sigmoid": "sigmoid",
    "softmax": "softmax",
    "softmaxext": "softmax",
    "logsoftmax": "log_softmax",
    "logsoftmaxext": "log_softmax",
}
# Producers whose values are bounded or already normalised in some other way: the output
# is neither one of the activations above nor plain logits, so no GA4xx check judges it.
BOUNDED_CELLS: Final = frozenset(
    {"Tanh", "HSigmoid", "Hardsigmoid", "LogSigmoid", "Softmin", "Softmax2d", "Softsign", "HShrink"}
)
BOUNDED_OPS: Final = frozenset(
    {
        "exp",
        "tanh",
        "truediv",
        "div",
        "reciprocal",
        "clamp",
        "clip",
        "clipbyvalue",
        "hardsigmoid",
        "hsigmoid",
        "logsigmoid",
        "softmin",
        "softsign",
        "where",
        "select",
    }
)


def _flows_in(graph: nx.MultiDiGraph, node: str) -> list[tuple[str, dict[str, Any]]]:
    return g.edges_in(graph, node, g.FLOWS)


def _data_producer(graph: nx.MultiDiGraph, node: str) -> str | None:
    """The producer of *node*'s first tensor argument (the data, not an index or a shape)."""
    edges = _flows_in(graph, node)
    if not edges:
        return None
    return min(edges, key=lambda edge: edge[1]["dst_slot"])[0]


def _is_mindspore_cell(graph: nx.MultiDiGraph, call: str) -> bool:
    cell = graph.nodes[call].get("cell")
    return bool(cell) and str(graph.nodes[cell].get("module", "")).startswith("mindspore.")


def describe_node(graph: nx.MultiDiGraph, node: str) -> str:
    """A short human name of a call or op node: ``the Sigmoid cell at 'head.1'``, ``ops.softmax ...``.

    Example:
        >>> import networkx as nx
        >>> graph = nx.MultiDiGraph()
        >>> graph.add_node("op:/sigmoid#1", kind="op", op="Tensor.sigmoid", scope="")
        >>> describe_node(graph, "op:/sigmoid#1")
        'Tensor.sigmoid in the construct of the network'
    """
    attrs = graph.nodes[node]
    if attrs["kind"] == g.CALL:
        where = attrs["path"] or "(root)"
        return f"the {attrs['class_name']} cell at '{where}'"
    if attrs["kind"] == g.OP:
        scope = f"the construct of '{attrs['scope']}'" if attrs["scope"] else "the construct of the network"
        return f"{attrs['op']} in {scope}"
    return node


def _made_by(graph: nx.MultiDiGraph, node: str) -> tuple[str, str | None] | None:
    """What *node* makes (see :func:`output_activation`), or ``None`` when it hands its data input on."""
    attrs = graph.nodes[node]
    kind = attrs["kind"]
    if kind == g.OP:
        op_type = attrs["op_type"]
        if op_type in ACTIVATION_OPS:
            return ACTIVATION_OPS[op_type], node
        if op_type in SHAPE_ONLY_OPS:
            return None
        return ("unknown" if op_type in BOUNDED_OPS else "none"), node
    if kind == g.CALL:
        class_name = attrs["class_name"]
        if not attrs["leaf"]:
            # A non-leaf call is the producer only when its body handed back a tensor
            # made outside it (a pass-through: it then encloses nothing) or made by
            # something the tracer cannot see.
            encloses = any(d["kind"] == g.ENCLOSES for _, _, d in graph.out_edges(node, data=True))
            return ("unknown", node) if encloses or len(_flows_in(graph, node)) != 1 else None
        if class_name in ACTIVATION_CELLS:
            return ACTIVATION_CELLS[class_name], node
        if class_name in PASS_THROUGH_CELLS:
            return None
        if class_name in BOUNDED_CELLS or not _is_mindspore_cell(graph, node):
            return "unknown", node  # a user-written leaf cell: its body is not traced
        return "none", node
    # The network's own input (or a parameter) returned as it is: raw values.
    return ("none", node) if kind == g.INPUT else ("unknown", node)


def output_activation(graph: nx.MultiDiGraph, start: str = "output:0") -> tuple[str, str | None]:
    """``(activation, node)``: the normalisation that makes the network's first output.

    *activation* is one of :data:`ACTIVATIONS`; *node* is the call or op node that applied
    it (for ``"none"`` the layer or operation that made the logits), ``None`` when
    ``output:0`` has no visible producer (or the graph has no traced output). With *start*
    another node, the walk starts there: an output node's producer, or a producer itself
    (what a loss inside the network is given). An output joined from parts
    (``ops.concat``, sliced, split...) that are all made by one activation is made by it;
    when only some of its parts are, it is ``"unknown"`` as a whole (see :func:`output_parts`).

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(4, 3), nn.Softmax(), nn.Dropout(p=0.2)])
        >>> output_activation(graphaudit.to_networkx(net, inputs=Tensor(np.ones((2, 4), np.float32))))
        ('softmax', 'call:1#1')
    """
    if start not in graph:
        return "unknown", None
    node = _data_producer(graph, start) if graph.nodes[start]["kind"] == g.OUTPUT else start
    seen: set[str] = set()
    told = False  # the parts are told once, at the first index-moving operation of the walk
    while node is not None and node not in seen:
        seen.add(node)
        if not told and graph.nodes[node].get("layout"):
            told = True
            joined = _joined(graph, start, node)
            if joined is not None:
                return joined
        made = _made_by(graph, node)
        if made is not None:
            return made
        node = _data_producer(graph, node)
    return "unknown", None


def _joined(graph: nx.MultiDiGraph, start: str, node: str) -> tuple[str, str | None] | None:
    """The activation of an output that index-moving operations (the first: *node*) put together.

    ``None`` when no part of it is normalised: the walk then goes on as through any
    shape-only operation, and stops at the first node that makes values (a concat: logits).
    """
    parts = output_parts(graph, start)
    activations = {a for a, _ in parts or ()} & NORMALISATIONS
    if parts and activations and len({a for a, _ in parts}) == 1:
        return parts[0]
    return ("unknown", node) if activations else None  # only part of it is normalised: see output_parts()


def _data_edge(graph: nx.MultiDiGraph, node: str) -> tuple[str, int, list[int]] | None:
    """``(producer, its slot, shape)`` of *node*'s first tensor argument."""
    edges = _flows_in(graph, node)
    if not edges:
        return None
    source, data = min(edges, key=lambda edge: edge[1]["dst_slot"])
    return source, data["src_slot"], list(g.shape_of(data))


class _Origins:
    """Element-wise origins of the tensors of one graph (see :mod:`~graphaudit.checks._shared.regions`)."""

    def __init__(self, graph: nx.MultiDiGraph) -> None:
        self.graph = graph
        self.parts: list[tuple[str, str | None]] = []
        self.memo: dict[tuple[str, int], np.ndarray | None] = {}

    def maker(self, made: tuple[str, str | None]) -> int:
        if made not in self.parts:
            self.parts.append(made)
        return self.parts.index(made)

    def of(self, node: str, slot: int, shape: list[int]) -> np.ndarray | None:
        key = (node, slot)
        if key not in self.memo:
            self.memo[key] = None  # a cycle (never in a traced pass) stops here
            self.memo[key] = self._of(node, slot, shape)
        found = self.memo[key]
        return found if found is not None and list(found.shape) == shape else None

    def _of(self, node: str, slot: int, shape: list[int]) -> np.ndarray | None:
        layout = self.graph.nodes[node].get("layout")
        if layout:
            inputs: dict[int, np.ndarray | None] = {}
            for source, data in _flows_in(self.graph, node):
                inputs[data["dst_slot"]] = self.of(source, data["src_slot"], list(g.shape_of(data)))
            outs = regions.carry(layout, [inputs.get(i) for i in range(max(inputs, default=-1) + 1)])
            if outs is not None and slot < len(outs):
                return outs[slot]
        made = _made_by(self.graph, node)
        if made is not None:
            return regions.filled(shape, self.maker(made))
        edge = _data_edge(self.graph, node)
        return regions.reshaped(self.of(*edge), shape) if edge is not None else None


def origins(
    graph: nx.MultiDiGraph, start: str = "output:0"
) -> tuple[np.ndarray, list[tuple[str, str | None]]] | None:
    """``(origins, parts)``: which part of *start*'s tensor each ``(activation, node)`` of *parts* made.

    *origins* holds, for each element, its index in *parts* (``-1``: not known); *start*
    is an output node or a producer (its first output). ``None`` when it cannot be told
    (no producer, or a tensor too large to follow element by element).
    """
    if start not in graph:
        return None
    if graph.nodes[start]["kind"] == g.OUTPUT:
        edge = _data_edge(graph, start)
        if edge is None:
            return None
        node, slot, shape = edge
    else:
        out = [
            d for _, _, d in graph.out_edges(start, data=True) if d["kind"] == g.FLOWS and d["src_slot"] == 0
        ]
        if not out:
            return None
        node, slot, shape = start, 0, list(g.shape_of(out[0]))
    walk = _Origins(graph)
    found = walk.of(node, slot, shape)
    return (found, walk.parts) if found is not None else None


def output_parts(graph: nx.MultiDiGraph, start: str = "output:0") -> list[tuple[str, str | None]] | None:
    """The ``(activation, node)`` that make the parts of an output, in the order of its elements.

    One for an output made whole by one node; several for an output put together by
    index-moving operations (a detection head's ``ops.concat`` of a box and a class
    branch); ``("unknown", None)`` for a part made where the tracer does not see. ``None``
    when it cannot be told.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, ops, Tensor
        >>> class Head(nn.Cell):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.box, self.cls = nn.Dense(4, 2), nn.SequentialCell([nn.Dense(4, 3), nn.Sigmoid()])
        ...     def construct(self, x):
        ...         return ops.concat((self.box(x), self.cls(x)), 1)
        >>> g = graphaudit.to_networkx(Head(), inputs=Tensor(np.ones((2, 4), np.float32)))
        >>> output_parts(g)
        [('none', 'call:box#1'), ('sigmoid', 'call:cls.1#1')]
        >>> output_activation(g)
        ('unknown', 'op:/concat#1')
    """
    found = origins(graph, start)
    if found is None:
        return None
    codes, parts = found
    # An element made where the tracer does not see is a part of its own: not known.
    values, first = np.unique(codes, return_index=True)
    return [parts[c] if c >= 0 else ("unknown", None) for c in values[np.argsort(first)].tolist()]

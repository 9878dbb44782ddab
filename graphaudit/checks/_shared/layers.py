"""Weight layers of a traced graph and the tensors between them (shared by the design rules GA3xx, GA4xx, GA0xx).

A *weight layer* is a call of a MindSpore ``Dense`` / ``mint.nn.Linear`` (kind ``"dense"``) or
of a convolution, transposed or not (``"conv"``). :func:`weight_layers` lists the calls of
the traced pass, each with its cell, kind, widths and the shape of the tensor it was given.

Walking the data flow: :func:`producer` goes back from a node's data argument to what made
it, and :func:`consumers` forward from a node's output to what reads it, both through
*shape glue* only (``reshape``, ``flatten``, transposes, ``cast``, ``x[...]``, and the cells
``nn.Flatten``, ``nn.Identity``, ``nn.Dropout``), the operations that move values without
computing new ones. A tensor that enters a ``Dense(activation=...)`` enters it at its
``matmul``: :func:`entered_layer` says which weight layer a node opens.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> net = nn.SequentialCell([nn.Dense(4, 8), nn.Flatten(), nn.Dense(8, 2)])
    >>> graph = graphaudit.to_networkx(net, inputs=Tensor(np.ones((2, 4), np.float32)))
    >>> [(layer.path, layer.kind, layer.width) for layer in weight_layers_of(graph, lambda node: None)]
    [('0', 'dense', None), ('2', 'dense', None)]
    >>> consumers(graph, "call:0#1")
    ['call:2#1']
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g
from graphaudit.checks._shared.outputs import PASS_THROUGH_CELLS, SHAPE_ONLY_OPS

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.checks.context import AuditContext

__all__ = [
    "Layer",
    "back_from",
    "consumers",
    "enclosing_call",
    "entered_layer",
    "is_glue",
    "layer_kind",
    "producer",
    "weight_layers",
    "weight_layers_of",
]

_DENSE_NAMES = frozenset({"Dense", "Linear"})


def layer_kind(cell: Any) -> str | None:
    """``"dense"`` or ``"conv"`` for a MindSpore weight layer (by class), else ``None``."""
    if cell is None:
        return None
    for cls in type(cell).__mro__:
        module = getattr(cls, "__module__", "") or ""
        if not module.startswith("mindspore."):
            continue
        if cls.__name__ in _DENSE_NAMES and module.startswith(("mindspore.nn.layer.basic", "mindspore.mint")):
            return "dense"
        if cls.__name__ == "_Conv" and ".conv" in module:
            return "conv"
    return None


def _pair(value: Any, dims: int) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,) * dims
    return tuple(int(v) for v in value)[:dims] if value is not None else (1,) * dims


@dataclass(frozen=True)
class Layer:
    """One call of a weight layer: where, what, how wide, and the shapes it saw."""

    call: str
    cell_node: str
    path: str
    kind: str  # "dense" or "conv"
    cell: Any
    in_shape: tuple[int, ...] | None
    out_shape: tuple[int, ...] | None
    leaf: bool
    source: str | None = None  # the node the layer's input tensor came from

    @property
    def width(self) -> int | None:
        """Output features or channels (``None`` when the cell does not say)."""
        return _int_attr(self.cell, "out_channels", "out_features")

    @property
    def in_width(self) -> int | None:
        return _int_attr(self.cell, "in_channels", "in_features")

    @property
    def transposed(self) -> bool:
        return bool(getattr(self.cell, "transposed", False)) or "Transpose" in type(self.cell).__name__

    @property
    def groups(self) -> int:
        return _int_attr(self.cell, "group", "groups") or 1

    def spatial(self, shape: tuple[int, ...] | None) -> tuple[int, ...]:
        """The spatial dims of a conv's input or output (``()`` for a Dense or an unknown shape)."""
        if self.kind != "conv" or shape is None or len(shape) < 3:
            return ()
        return tuple(shape[2:])

    @property
    def kernel(self) -> tuple[int, ...]:
        """The effective (dilated) kernel size per spatial dim of a conv."""
        dims = len(self.spatial(self.in_shape)) or 2
        kernel = _pair(getattr(self.cell, "kernel_size", 1), dims)
        dilation = _pair(getattr(self.cell, "dilation", 1), dims)
        return tuple(d * (k - 1) + 1 for k, d in zip(kernel, dilation))


def _int_attr(cell: Any, *names: str) -> int | None:
    for name in names:
        value = getattr(cell, name, None)
        if isinstance(value, int) and not isinstance(value, bool):
            return value
    return None


def _flows_in(graph: nx.MultiDiGraph, node: str) -> list[tuple[str, dict[str, Any]]]:
    return g.edges_in(graph, node, g.FLOWS)


def _flows_out(graph: nx.MultiDiGraph, node: str) -> list[tuple[str, dict[str, Any]]]:
    return g.edges_out(graph, node, g.FLOWS)


def enclosing_call(graph: nx.MultiDiGraph, node: str) -> str | None:
    """The call node that directly encloses *node* (``None`` for the root call or an input)."""
    encloses = g.edges_in(graph, node, g.ENCLOSES)
    return encloses[0][0] if encloses else None


def _ancestors(graph: nx.MultiDiGraph, node: str) -> Iterator[str]:
    seen = {node}
    parent = enclosing_call(graph, node)
    while parent is not None and parent not in seen:
        seen.add(parent)
        yield parent
        parent = enclosing_call(graph, parent)


def _within(graph: nx.MultiDiGraph, node: str, call: str) -> bool:
    return node == call or call in set(_ancestors(graph, node))


def is_glue(graph: nx.MultiDiGraph, node: str) -> bool:
    """Shape glue: a shape-only operation or a pass-through leaf cell (values moved, not computed)."""
    attrs = graph.nodes[node]
    if attrs["kind"] == g.OP:
        return attrs["op_type"] in SHAPE_ONLY_OPS
    return attrs["kind"] == g.CALL and bool(attrs["leaf"]) and attrs["class_name"] in PASS_THROUGH_CELLS


def producer(graph: nx.MultiDiGraph, node: str, through: Callable[[str], bool] | None = None) -> str | None:
    """What made *node*'s data argument (its lowest input slot), back through shape glue.

    *through* (a predicate on nodes) widens what is walked through.
    """
    seen = {node}
    current = node
    while True:
        edges = _flows_in(graph, current)
        if not edges:
            return None
        source = min(edges, key=lambda edge: edge[1]["dst_slot"])[0]
        if source in seen:
            return None
        seen.add(source)
        if graph.nodes[source]["kind"] in (g.CALL, g.OP) and (
            is_glue(graph, source) or (through is not None and through(source))
        ):
            current = source
            continue
        return source


def back_from(
    graph: nx.MultiDiGraph, source: str | None, through: Callable[[str], bool] | None = None
) -> str | None:
    """*source* itself, or what made it when it is shape glue (or *through*): where a layer's input comes from."""
    if source is None or graph.nodes[source]["kind"] not in (g.CALL, g.OP):
        return source
    if is_glue(graph, source) or (through is not None and through(source)):
        return producer(graph, source, through)
    return source


def _data_slot(graph: nx.MultiDiGraph, target: str, data: dict[str, Any]) -> bool:
    """Whether a flow into *target* is its data argument (the lowest slot fed by a tensor)."""
    slots = [d["dst_slot"] for _, d in _flows_in(graph, target)]
    return data["dst_slot"] == min(slots)


def entered_layer(graph: nx.MultiDiGraph, target: str, source: str, layers: dict[str, Layer]) -> str | None:
    """The weight-layer call that a tensor from *source* enters at *target*, if any."""
    if target in layers:
        return target
    source_calls = set(_ancestors(graph, source)) | {source}
    for call in _ancestors(graph, target):
        if call in source_calls:
            return None
        if call in layers:
            return call
    return None


def consumers(
    graph: nx.MultiDiGraph,
    node: str,
    layers: dict[str, Layer] | None = None,
    through: Callable[[str], bool] | None = None,
) -> list[str]:
    """What reads *node*'s output, forward through shape glue (and *through*), as data.

    With *layers* (call → :class:`Layer`), a tensor entering a weight layer is reported as
    that layer's call, not as the first operation inside it.
    """
    found: list[str] = []
    seen = {node}
    frontier = [node]
    while frontier:
        current = frontier.pop(0)
        for target, data in sorted(
            _flows_out(graph, current), key=lambda e: graph.nodes[e[0]].get("order", 0)
        ):
            if target in seen:
                continue
            seen.add(target)
            attrs = graph.nodes[target]
            if attrs["kind"] not in (g.CALL, g.OP):
                found.append(target)
                continue
            entered = entered_layer(graph, target, current, layers) if layers is not None else None
            if entered is not None:
                found.append(entered)
            elif (is_glue(graph, target) and _data_slot(graph, target, data)) or (
                through is not None and through(target)
            ):
                frontier.append(target)
            else:
                found.append(target)
    return list(dict.fromkeys(found))


def _shape(data: dict[str, Any]) -> tuple[int, ...] | None:
    try:
        return g.shape_of(data)
    except Exception:
        return None


def weight_layers_of(graph: nx.MultiDiGraph, cell_of: Callable[[str], Any]) -> list[Layer]:
    """Every call of a weight layer in the traced pass, in call order (*cell_of*: cell node → object)."""
    found = []
    calls = sorted(g.nodes_of_kind(graph, g.CALL), key=lambda item: item[1]["order"])
    for call, attrs in calls:
        cell_node = attrs.get("cell") or ""
        cell = cell_of(cell_node) if cell_node else None
        kind = layer_kind(cell)
        if kind is None and cell is None and attrs["class_name"] in _DENSE_NAMES:
            kind = "dense"  # a doctest or a tool without the objects: known by class name
        if kind is None:
            continue
        in_edges, out_edges = _flows_in(graph, call), _flows_out(graph, call)
        if not attrs["leaf"]:  # a Dense(activation=...) is entered at its first operation
            inner = [n for n in graph.successors(call) if enclosing_call(graph, n) == call]
            in_edges = in_edges or [
                e for n in inner for e in _flows_in(graph, n) if not _within(graph, e[0], call)
            ]
            out_edges = out_edges or [
                (t, d) for n in inner for t, d in _flows_out(graph, n) if not _within(graph, t, call)
            ]
        entry = min(in_edges, key=lambda e: e[1]["dst_slot"]) if in_edges else None
        in_shape = _shape(entry[1]) if entry is not None else None
        out_shape = _shape(out_edges[0][1]) if out_edges else None
        found.append(
            Layer(
                call,
                cell_node,
                attrs["path"],
                kind,
                cell,
                in_shape,
                out_shape,
                bool(attrs["leaf"]),
                entry[0] if entry is not None else None,
            )
        )
    return found


def _weight_layers(ctx: AuditContext) -> list[Layer]:
    cells = ctx.structure.cells
    return weight_layers_of(ctx.graph, lambda node: cells.get(node))


def weight_layers(ctx: AuditContext) -> list[Layer]:
    """The weight-layer calls of the audit's traced pass (computed once per audit)."""
    return ctx.shared(_weight_layers)

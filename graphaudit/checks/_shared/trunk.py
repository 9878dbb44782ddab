"""The convolution trunk of a traced pass: affine maps, poolings and the receptive field (GA308, GA309, GA315-GA318).

Three facts about a trunk of convolutions that the design rules share:

- :func:`affine_kind` names the nodes that are *affine* but not shape glue: a BatchNorm
  (an affine map per channel at inference, folded into the convolution before it by every
  deployment tool), an average pooling, a nearest or bilinear resize, a padding. Two
  convolutions joined only by those still compose into one convolution.
- :func:`poolings` lists every pooling of the trunk with its window, stride and the spatial
  sizes it saw (cells ``nn.MaxPool2d``... and functional ``ops.max_pool2d``...).
- :func:`receptive_fields` follows the data flow in call order and gives, for every node, the
  receptive field (in input pixels) and the *jump* (the product of the strides so far) of
  the map it outputs, by the recurrence ``r' = r + (k - 1) * j``, ``j' = j * s`` (Araujo,
  Norris & Sim, "Computing Receptive Fields of Convolutional Neural Networks", Distill 2019).

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> net = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.MaxPool2d(2, 2), nn.Conv2d(4, 4, 3)])
    >>> from graphaudit.capture import capture
    >>> captured = capture(net, Tensor(np.ones((1, 3, 16, 16), np.float32)))
    >>> fields = receptive_fields_of(captured.graph, captured.structure.cells.get)
    >>> fields["call:2#1"]
    (8, 2)
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g
from graphaudit.checks._shared.layers import Layer, _pair, weight_layers, weight_layers_of

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.checks.context import AuditContext

__all__ = [
    "Pooling",
    "affine_kind",
    "is_pooling",
    "poolings",
    "receptive_fields",
    "receptive_fields_of",
    "spatial_of",
]

_AFFINE_CELLS = (
    "AvgPool",
    "Upsample",
    "ResizeBilinear",
    "ResizeNearestNeighbor",
    "Pad",
    "ZeroPad",
    "ConstantPad",
)
_AFFINE_OPS = ("avgpool", "interpolate", "resizenearest", "resizebilinear", "upsample", "pad")
_POOL_CELLS = ("MaxPool", "AvgPool")


def affine_kind(graph: nx.MultiDiGraph, node: str, cell: Any = None) -> str | None:
    """The class or operation name of an affine node that is not shape glue (``None`` otherwise)."""
    attrs = graph.nodes[node]
    if attrs["kind"] == g.CALL and attrs["leaf"]:
        name = attrs["class_name"]
        if "BatchNorm" in name or name.startswith(_AFFINE_CELLS):
            return name
        return None
    if attrs["kind"] == g.OP:
        op = str(attrs.get("op_type", ""))
        if op.startswith(_AFFINE_OPS) and "adaptive" not in op:
            return op
    return None


def is_pooling(graph: nx.MultiDiGraph, node: str) -> bool:
    """A pooling cell (``nn.MaxPool2d``, ``nn.AdaptiveAvgPool2d``...) or functional pooling operation."""
    attrs = graph.nodes[node]
    if attrs["kind"] == g.CALL:
        return bool(attrs["leaf"]) and "Pool" in attrs["class_name"]
    return attrs["kind"] == g.OP and "pool" in str(attrs.get("op_type", ""))


def _flows_in(graph: nx.MultiDiGraph, node: str) -> list[dict[str, Any]]:
    return [d for _, d in g.edges_in(graph, node, g.FLOWS)]


def _flows_out(graph: nx.MultiDiGraph, node: str) -> list[dict[str, Any]]:
    return [d for _, d in g.edges_out(graph, node, g.FLOWS)]


def spatial_of(data: dict[str, Any] | None) -> tuple[int, ...]:
    """The spatial dims of a flow's ``(N, C, *spatial)`` tensor of 3 to 5 dims (``()`` otherwise)."""
    if data is None:
        return ()
    try:
        shape = g.shape_of(data)
    except Exception:
        return ()
    return tuple(int(d) for d in shape[2:]) if shape is not None and 3 <= len(shape) <= 5 else ()


@dataclass(frozen=True)
class Pooling:
    """One pooling of the traced pass: where, its window and stride (per dim), the maps it saw."""

    node: str
    path: str
    name: str
    window: tuple[int, ...]
    stride: tuple[int, ...]
    size: tuple[int, ...]
    out: tuple[int, ...]

    @property
    def global_pool(self) -> bool:
        """It reduces the map to one position (a global pooling before the head)."""
        return bool(self.out) and all(d == 1 for d in self.out)


def _pooling(graph: nx.MultiDiGraph, node: str, cell: Any) -> Pooling | None:
    attrs = graph.nodes[node]
    # The class first: the flows' shapes are read only for a pooling cell's call (asked of every call).
    if not (attrs["kind"] == g.CALL and attrs["leaf"] and attrs["class_name"].startswith(_POOL_CELLS)):
        return None
    inputs, outputs = _flows_in(graph, node), _flows_out(graph, node)
    size = spatial_of(min(inputs, key=lambda d: d["dst_slot"])) if inputs else ()
    out = spatial_of(outputs[0]) if outputs else ()
    if not size or len(out) != len(size) or cell is None:
        return None
    dims = len(size)
    window = _pair(getattr(cell, "kernel_size", None) or 1, dims)
    stride = _pair(getattr(cell, "stride", None) or window, dims)
    return Pooling(node, attrs["path"], attrs["class_name"], window, stride, size, out)


def poolings(ctx: AuditContext) -> list[Pooling]:
    """The poolings of the audit's traced pass whose window and stride are known, in call order."""
    return ctx.shared(_poolings)


def _poolings(ctx: AuditContext) -> list[Pooling]:
    cells = ctx.structure.cells
    found = []
    for node, attrs in sorted(g.nodes_of_kind(ctx.graph, g.CALL), key=lambda item: item[1]["order"]):
        pool = _pooling(ctx.graph, node, cells.get(attrs.get("cell") or ""))
        if pool is not None:
            found.append(pool)
    return found


def receptive_fields_of(
    graph: nx.MultiDiGraph, cell_of: Callable[[str], Any], layers: Iterable[Layer] | None = None
) -> dict[str, tuple[int, int]]:
    """``node → (receptive field, jump)`` of the map each call or operation outputs, along its largest input.

    *layers*: the graph's weight layers when the caller has them (else found here).

    A convolution or a pooling grows the field by ``(k - 1) * jump`` (its largest spatial dim)
    and multiplies the jump by its stride; an operation whose output map is smaller than its
    input by an integer factor without a known kernel (an adaptive or functional pooling)
    counts as a window equal to its stride; anything else passes the largest field through.
    """
    by_call = {
        layer.call: layer for layer in (weight_layers_of(graph, cell_of) if layers is None else layers)
    }
    nodes = [n for n, a in graph.nodes(data=True) if a["kind"] in (g.CALL, g.OP)]
    nodes.sort(key=lambda n: graph.nodes[n].get("order", 0))
    fields: dict[str, tuple[int, int]] = {}
    for node in nodes:
        sources = [fields.get(s, (1, 1)) for s, _ in g.edges_in(graph, node, g.FLOWS)]
        field, jump = max(sources) if sources else (1, 1)
        attrs = graph.nodes[node]
        layer = by_call.get(node)
        if layer is not None and layer.kind == "conv" and not layer.transposed:
            kernel = max(layer.kernel or (1,))
            stride = max(_pair(getattr(layer.cell, "stride", 1), len(layer.kernel) or 2))
            field, jump = field + (kernel - 1) * jump, jump * stride
        elif layer is None and (attrs["kind"] == g.OP or attrs.get("leaf")):
            cell = cell_of(attrs.get("cell") or "") if attrs["kind"] == g.CALL else None
            pool = _pooling(graph, node, cell) if cell is not None else None
            if pool is not None:
                field, jump = field + (max(pool.window) - 1) * jump, jump * max(pool.stride)
            else:
                field, jump = _shrunk(graph, node, field, jump)
        fields[node] = (field, jump)
    return fields


def _shrunk(graph: nx.MultiDiGraph, node: str, field: int, jump: int) -> tuple[int, int]:
    """``(field, jump)`` past *node*, whose output map is smaller than its input's by an integer factor."""
    inputs, outputs = _flows_in(graph, node), _flows_out(graph, node)
    size = spatial_of(min(inputs, key=lambda d: d["dst_slot"])) if inputs else ()
    out = spatial_of(outputs[0]) if outputs else ()
    if size and len(out) == len(size) and all(o >= 1 for o in out) and out != size:
        factor = max(s // o for s, o in zip(size, out))
        if factor > 1 and all(s >= o for s, o in zip(size, out)):
            return field + (factor - 1) * jump, jump * factor
    return field, jump


def receptive_fields(ctx: AuditContext) -> dict[str, tuple[int, int]]:
    """The receptive fields of the audit's traced pass (computed once per audit)."""
    return ctx.shared(_receptive_fields)


def _receptive_fields(ctx: AuditContext) -> dict[str, tuple[int, int]]:
    cells = ctx.structure.cells
    return receptive_fields_of(ctx.graph, lambda node: cells.get(node), weight_layers(ctx))

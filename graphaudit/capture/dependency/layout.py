"""Which axis is the batch in a network with time-major recurrent layers, from what the audit knows.

``nn.LSTM``/``nn.GRU``/``nn.RNN`` with ``batch_first=False`` (MindSpore's default) read
``(time, batch, features)``. The commonest bug of a recurrent port feeds such a layer a
``(batch, time, features)`` tensor: the recurrence then runs from sample to sample. Nothing
raises; axis 0 of the network's input may as well be time (a time-major network fed
``(T, B, C)`` does exactly the same arithmetic). What tells them apart is the batch size *B*,
from evidence the audit has, never a guess:

- the label given (``label=``): its axis 0 is the batch;
- the training pipeline's batch size (``dataset=``), when it is the traced batch's;
- a convolution that reads the network's input itself: its axis 0 is the batch by definition
  (a spectrogram ``(B, 1, F, T)`` into ``Conv2d``, DeepSpeech2's front end).

With *B* known, the layer's traced input says the rest: axis 1 is *B* (and axis 0 is not):
fed right; axis 0 is *B* (and axis 1 is not): fed a batch-major tensor, the bug. ``B == T``
and a *B* found on neither axis cannot be decided and are said so. The dependency probe then
runs along the network input's real batch axis: :class:`BatchMajor` puts it first, and the
probe reads each time-major ``(T, B, ...)`` tensor batch first, so that "one row per sample" holds.

Example:
    >>> decide_batch((2, 7, 3), None, [], None).reason
    'which axis of the network input (2, 7, 3) is the batch is not known'
    >>> decide_batch((7, 2, 3), (2, 5), [], None).batch, decide_batch((7, 2, 3), (2, 5), [], None).axis
    (2, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import networkx as nx
from mindspore import nn, ops

from graphaudit import graph as g

__all__ = [
    "Batch",
    "BatchMajor",
    "RecurrentUse",
    "convolved_input",
    "decide_batch",
    "layer_input_shape",
    "recurrent_uses",
    "time_major_layers",
]

_CONVOLUTIONS = ("Conv1d", "Conv2d", "Conv3d")


def time_major_layers(cells: dict[str, Any]) -> list[str]:
    """The paths of the recurrent layers that read ``(time, batch, ...)`` (``batch_first=False``)."""
    recurrent = tuple(
        c for c in (getattr(nn, n, None) for n in ("RNN", "LSTM", "GRU")) if isinstance(c, type)
    )
    return [
        path or "(root)"
        for path, cell in cells.items()
        if isinstance(cell, recurrent) and not getattr(cell, "batch_first", True)
    ]


def _enclosed(graph: nx.MultiDiGraph, call: str) -> set[str]:
    """*call* and every call and operation that ran inside it."""
    inside, frontier = {call}, [call]
    while frontier:
        node = frontier.pop()
        for _, target, data in graph.out_edges(node, data=True):
            if data["kind"] == g.ENCLOSES and target not in inside:
                inside.add(target)
                frontier.append(target)
    return inside


def layer_input_shape(graph: nx.MultiDiGraph, path: str) -> tuple[int, ...] | None:
    """The shape of the sequence a recurrent layer's first call was given (its first 3-D input).

    ``nn.LSTM`` is not a leaf: the tensor enters the operations and the cell inside it, so
    the first tensor flowing into the call's body from outside it is taken.
    """
    path = "" if path == "(root)" else path
    calls = sorted(
        (attrs["order"], node) for node, attrs in g.nodes_of_kind(graph, g.CALL) if attrs["path"] == path
    )
    if not calls:
        return None
    inside = _enclosed(graph, calls[0][1])
    entering = [
        (graph.nodes[target].get("order", 0), data.get("dst_slot", 0), g.shape_of(data))
        for source, target, data in graph.in_edges(inside, data=True)
        if data["kind"] == g.FLOWS and source not in inside and "shape" in data
    ]
    shapes = [shape for _, _, shape in sorted(entering) if len(shape) == 3]
    return shapes[0] if shapes else None


def convolved_input(graph: nx.MultiDiGraph, index: int, shape: tuple[int, ...]) -> str | None:
    """The path of a convolution that reads network input *index* (of *shape*) itself: its axis 0 is the batch.

    The shape is compared too: an input node's index counts flattened tensors, which a nested
    argument shifts from the index of the argument.
    """
    for node, attrs in g.nodes_of_kind(graph, g.INPUT):
        if int(attrs["index"]) != index or "shape" not in attrs or g.shape_of(attrs) != shape:
            continue
        for _, target, data in graph.out_edges(node, data=True):
            target_attrs = graph.nodes[target]
            if data["kind"] == g.FLOWS and target_attrs.get("class_name") in _CONVOLUTIONS:
                return str(target_attrs["path"])
    return None


@dataclass(frozen=True)
class Batch:
    """The batch size of the network's primary input, on which axis, and why; or why it is not known."""

    batch: int | None
    axis: int = 0
    why: str = ""
    reason: str | None = None  # why it could not be decided


def decide_batch(
    shape: tuple[int, ...],
    label: tuple[int, ...] | None,
    dataset: list[int],
    convolution: str | None,
) -> Batch:
    """Which axis of the primary input of *shape* is the batch, from the label's shape, the
    dataset's batch sizes and a convolution (its path) reading that input straight."""
    shown = f"({', '.join(str(d) for d in shape)})"
    if convolution is not None:
        return Batch(shape[0], 0, f"the network input {shown} is read by the convolution '{convolution}'")
    sizes = []
    aligned = label is not None and len(label) >= 2 and len(shape) >= 2 and tuple(label[:2]) == shape[:2]
    if label is not None and len(label) >= 1 and not aligned:
        # A per-position label laid out like the input, (T, B) beside (T, B, C) as much as
        # (B, T) beside (B, T, C), says nothing of which axis is the batch: only a label
        # whose axes differ from the input's tells.
        sizes.append((int(label[0]), f"the label's axis 0 ({label[0]})"))
    sizes += [(size, f"the training pipeline's batch size ({size})") for size in dataset]
    for size, why in sizes:
        axes = [axis for axis in (0, 1) if axis < len(shape) and shape[axis] == size]
        if len(axes) == 1:
            return Batch(size, axes[0], why)
        if len(axes) == 2:
            return Batch(None, reason=f"{why} is both axis 0 and axis 1 of the network input {shown}")
    if aligned:
        return Batch(
            None,
            reason=f"which axis of the network input {shown} is the batch is not known: the label "
            f"{tuple(label)} is laid out like it (one per position), which tells neither; pass dataset= "
            "(the training pipeline: its batch size decides)",
        )
    return Batch(None, reason=f"which axis of the network input {shown} is the batch is not known")


@dataclass(frozen=True)
class RecurrentUse:
    """A time-major recurrent layer, the sequence it was given, and whether its axis 1 is the batch."""

    path: str
    shape: tuple[int, ...] | None
    misfed: bool = False  # its axis 0 is the batch: the recurrence runs over the samples
    reason: str | None = None  # why it cannot be told
    inner: tuple[str, ...] = ()  # the paths of the cells inside it (where the probe sees samples mix)


def recurrent_uses(graph: nx.MultiDiGraph, cells: dict[str, Any], batch: Batch) -> list[RecurrentUse]:
    """How each time-major layer among *cells* (by path) was fed, given the network input's *batch*."""
    uses = []
    for path in time_major_layers(cells):
        inner = tuple(sorted(p for p in cells if p.startswith(f"{path}.")))
        shape = layer_input_shape(graph, path)
        if shape is None:
            uses.append(
                RecurrentUse(
                    path, None, inner=inner, reason=f"the traced pass shows no 3-D input of '{path}'"
                )
            )
            continue
        shown = f"({', '.join(str(d) for d in shape)})"
        if batch.batch is None:
            reason = f"'{path}' is a time-major recurrent layer (batch_first=False) fed {shown}, and {batch.reason}"
            uses.append(RecurrentUse(path, shape, inner=inner, reason=reason))
        elif shape[0] == shape[1]:
            reason = f"'{path}' (batch_first=False) is fed {shown}: its batch and time axes are equally long"
            uses.append(RecurrentUse(path, shape, inner=inner, reason=reason))
        elif shape[1] == batch.batch:
            uses.append(RecurrentUse(path, shape, inner=inner))
        elif shape[0] == batch.batch:
            uses.append(RecurrentUse(path, shape, misfed=True, inner=inner))
        else:
            reason = (
                f"'{path}' (batch_first=False) is fed {shown}, and neither of its first two axes is the "
                f"batch of {batch.batch} ({batch.why})"
            )
            uses.append(RecurrentUse(path, shape, inner=inner, reason=reason))
    return uses


class BatchMajor(nn.Cell):
    """The network fed batch-major inputs, for the dependency probe only.

    The probe changes axis 0, one row per sample. The inputs at *swapped* were made batch-major
    by the caller and are put back to the network's layout here. (What the probe reads, every
    call's time-major ``(T, B, ...)`` tensors included, it reads batch first itself:
    ``probe_dependencies(time_major=True)``.) ``auto_prefix=False``: the network's parameter
    names stay its own.
    """

    def __init__(self, net: nn.Cell, swapped: tuple[int, ...]) -> None:
        super().__init__(auto_prefix=False)
        self.net = net
        self.swapped = swapped

    def construct(self, *args: Any) -> Any:
        return self.net(*[ops.swapaxes(a, 0, 1) if i in self.swapped else a for i, a in enumerate(args)])

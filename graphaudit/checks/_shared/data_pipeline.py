"""Readings of a pipeline graph that several data checks share: how rows are shuffled, how a column is prepared.

:func:`shuffling` says which steps reorder the rows before they are batched;
:func:`preparation` follows one column from the source to the network and sums up what its
transforms do to it: the value map (``Rescale``, ``Normalize``, ``ToTensor`` compose to
``x * scale + shift`` per channel, so two pipelines that scale alike compare equal however
they spell it), the output size of the last resize or crop, the channel order, the colour
order, the dtype cast, the random transforms.

Example:
    >>> import numpy as np
    >>> import mindspore.dataset as ds
    >>> import mindspore.dataset.vision as vision
    >>> from graphaudit.capture.data.pipeline import pipeline_graph
    >>> images = np.zeros((4, 8, 8, 3), np.uint8)
    >>> data = ds.NumpySlicesDataset({"image": images}).map(
    ...     [vision.Rescale(1 / 255, 0), vision.Normalize([0.5] * 3, [0.25] * 3), vision.HWC2CHW()], "image")
    >>> prep = preparation(pipeline_graph(data, "train"), "image")
    >>> [round(s, 4) for s in prep.scale], prep.shift, prep.layout
    ([0.0157, 0.0157, 0.0157], [-2.0, -2.0, -2.0], 'CHW')
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from graphaudit.graph import pipeline as gp

__all__ = [
    "ROW_SHUFFLING",
    "SIZING",
    "Preparation",
    "Shuffling",
    "dataset_rows",
    "describe_order",
    "preparation",
    "shuffling",
]

#: Source shuffle modes that put the rows in a random order (``files`` only reorders whole files).
ROW_SHUFFLING = frozenset({"global", "infile", "partial", "adaptive"})
SIZING = frozenset(
    {
        "Resize",
        "RandomResize",
        "CenterCrop",
        "RandomCrop",
        "Crop",
        "RandomResizedCrop",
        "ResizedCrop",
        "RandomCropDecodeResize",
        "FiveCrop",
        "TenCrop",
        "PadToSize",
    }
)
_VALUE_NEUTRAL = frozenset(
    {"Decode", "TypeCast", "HWC2CHW", "Pad", "ToPIL", "ToNumpy", "HorizontalFlip", "VerticalFlip", "OneHot"}
)


@dataclass
class Shuffling:
    """How a pipeline orders its rows before they are batched."""

    ordered_sources: list[tuple[str, str]] = field(default_factory=list)  # (node, mode) of sources in order
    row_shufflers: list[str] = field(default_factory=list)  # sources and shuffle ops that reorder rows
    buffers: list[tuple[str, int, int]] = field(default_factory=list)  # (node, buffer_size, rows reaching it)
    after_batch: list[str] = field(default_factory=list)  # shuffle ops that reorder whole batches
    user_sampler: bool = False

    @property
    def shuffled(self) -> bool:
        return bool(self.row_shufflers) or self.user_sampler


def shuffling(graph: nx.MultiDiGraph) -> Shuffling:
    """Which steps of *graph* reorder its rows (see :class:`Shuffling`)."""
    found = Shuffling()
    for node, attrs in gp.steps(graph):
        if attrs["kind"] == gp.SOURCE:
            mode = attrs.get("shuffle", "none")
            if mode == "sampler":
                found.user_sampler = True
            elif mode in ROW_SHUFFLING:
                found.row_shufflers.append(node)
            else:
                found.ordered_sources.append((node, mode))
        elif attrs["op"] == "shuffle":
            batched = any(graph.nodes[n]["op"] == "batch" for n in gp.upstream(graph, node))
            if batched:
                found.after_batch.append(node)
                continue
            found.row_shufflers.append(node)
            rows = next((graph.nodes[s]["rows"] for s in graph.predecessors(node)), -1)
            found.buffers.append((node, int(attrs.get("buffer_size", 0)), int(rows)))
    return found


@dataclass
class Preparation:
    """What the transforms of a pipeline do to one column, from the source to the network."""

    column: str
    transforms: list[str] = field(default_factory=list)  # node ids, in order
    scale: list[float] | None = field(default_factory=lambda: [1.0])
    shift: list[float] | None = field(default_factory=lambda: [0.0])
    size: tuple[int, ...] | None = None
    size_node: str | None = None
    resize: tuple[int, ...] | None = None  # the size of the deterministic resize before the last crop
    layout: str = "HWC"
    color: str = "RGB"
    dtype: str = ""
    random: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)  # Python functions: what they do is not known
    other: list[str] = field(default_factory=list)  # other deterministic transforms, by name

    @property
    def value_map_known(self) -> bool:
        return self.scale is not None and self.shift is not None


def _chain(graph: nx.MultiDiGraph, column: str) -> list[str]:
    """The transform nodes that touch *column* on its way to the network, in order."""
    names, chain = {column}, []
    for node, attrs in reversed(gp.steps(graph)):
        outputs = json.loads(attrs.get("output_columns", "[]") or "[]")
        inputs = json.loads(attrs.get("input_columns", "[]") or "[]")
        if attrs["op"] == "rename":
            names = {inputs[outputs.index(n)] if n in outputs else n for n in names}
        elif attrs["op"] == "map" and (names & set(inputs) or names & set(outputs)):
            chain = gp.transforms_of(graph, node) + chain
            if outputs and len(inputs) == len(outputs):
                names = {inputs[outputs.index(n)] if n in outputs else n for n in names}
    return chain


def _size(value: Any, short_side: bool) -> tuple[int, ...] | None:
    """``(h, w)``, or ``(s,)`` for a resize of the shorter side to *s* (the aspect ratio kept)."""
    if isinstance(value, int):
        value = [value]
    if not (isinstance(value, list) and value and all(isinstance(v, int) for v in value)):
        return None
    if len(value) == 1:
        return (value[0],) if short_side else (value[0], value[0])
    return tuple(value)


def _affine(prep: Preparation, scale: list[float], shift: list[float]) -> None:
    """Compose ``x -> x * scale + shift`` onto what the column already went through."""
    if prep.scale is None or prep.shift is None:
        return
    n = max(len(prep.scale), len(scale))
    old_s = prep.scale * n if len(prep.scale) == 1 else prep.scale
    old_b = prep.shift * n if len(prep.shift) == 1 else prep.shift
    new_s = scale * n if len(scale) == 1 else scale
    new_b = shift * n if len(shift) == 1 else shift
    prep.scale = [a * s for a, s in zip(old_s, new_s)]
    prep.shift = [b * s + t for b, s, t in zip(old_b, new_s, new_b)]


def _apply(prep: Preparation, node: str, attrs: dict[str, Any], params: dict[str, Any]) -> None:
    name, random = attrs["name"], bool(attrs.get("random"))
    if random:
        prep.random.append(node)
    if attrs.get("python"):
        prep.unknown.append(node)
        prep.scale = prep.shift = None  # a Python function: what it does to the values is not known
        return
    if name in ("Rescale",):
        _affine(prep, [float(params.get("rescale", 1.0))], [float(params.get("shift", 0.0))])
    elif name in ("Normalize", "NormalizePad"):
        mean = [float(m) for m in params.get("mean", [0.0])]
        std = [float(s) for s in params.get("std", [1.0])]
        _affine(prep, [1 / s for s in std], [-m / s for m, s in zip(mean, std)])
        if name == "Normalize" and params.get("is_hwc") is False:
            prep.layout = "CHW"
    elif name == "ToTensor":
        _affine(prep, [1 / 255], [0.0])
        prep.layout, prep.dtype = "CHW", str(params.get("output_type", "float32"))
    elif name == "HWC2CHW":
        prep.layout = "CHW"
    elif name == "TypeCast":
        prep.dtype = str(params.get("data_type", ""))
    elif name == "ConvertColor" or (name == "Decode" and params.get("rgb") is False):
        prep.color = "converted" if name == "ConvertColor" else "BGR"
    elif name not in _VALUE_NEUTRAL and not random and name not in SIZING:
        prep.other.append(name)  # a deterministic transform of its own (AdjustGamma, Grayscale...)
    if name in SIZING:
        short = name in ("Resize", "RandomResize")
        size = _size(params.get("size"), short)
        if short and not random:
            prep.resize = size
        prep.size, prep.size_node = size, node


def preparation(graph: nx.MultiDiGraph, column: str) -> Preparation:
    """What the transforms of *graph* do to *column* (see :class:`Preparation`)."""
    prep = Preparation(column)
    for node in _chain(graph, column):
        attrs = graph.nodes[node]
        prep.transforms.append(node)
        params = json.loads(attrs.get("params", "{}") or "{}")
        _apply(prep, node, attrs, params)
    return prep


def dataset_rows(graph: nx.MultiDiGraph) -> int:
    """The rows of one epoch over every shard (the sources' rows times their shards), -1 when unknown.

    Example:
        >>> import numpy as np
        >>> import mindspore.dataset as ds
        >>> from graphaudit.capture.data.pipeline import pipeline_graph
        >>> dataset_rows(pipeline_graph(ds.NumpySlicesDataset({"x": np.zeros(10)}).batch(4)))
        10
    """
    total = 0
    for node in gp.sources_of(graph):
        attrs = graph.nodes[node]
        if attrs["rows"] < 0:
            return -1
        total += attrs["rows"] * max(int(attrs.get("num_shards", 1)), 1)
    return total


def describe_order(mode: str) -> str:
    """How a source that does not shuffle its rows orders them, in words."""
    if mode == "files":
        return "shuffles only the order of its files (Shuffle.FILES): the rows of each file keep their order"
    return "reads its rows in the same order every epoch (shuffle=False or a sequential sampler)"

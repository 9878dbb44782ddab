"""The attributes that decide what a layer computes, read on both sides of a port and compared.

A :class:`Layer` is one layer's kind (``batchnorm``, ``layernorm``, ``activation``,
``softmax``, ``dropout``, ``conv``, ``pool``) and its attributes in one convention, torch's:

- ``momentum``: the weight of the batch's statistics in the running ones (torch's 0.1;
  MindSpore's ``nn.BatchNorm2d(momentum=0.9)`` and ONNX's ``momentum`` weigh the running
  statistics: ``1 - m``; ``mint.nn.BatchNorm2d`` takes torch's);
- ``approximate``: GELU's ``"none"`` (erf) or ``"tanh"`` (MindSpore's ``nn.GELU()`` default);
- ``p``: the dropout *rate* (MindSpore 1.x's ``keep_prob`` is ``1 - p``);
- ``mode`` of a resize: ``nearest``, ``linear`` (torch's bilinear...), ``cubic``; its
  ``align_corners`` where the mode interpolates (MindSpore's ``None`` is ``False``, as torch's);
- ``pads``: per spatial dimension ``(begin, end)``, or ``"same"`` / ``"valid"`` when the pad
  depends on the input's size; ``kernel``, ``stride``, ``dilation`` as tuples.

The original's layers come from a dump's ``manifest.json`` (:func:`torch_layers`) or an ONNX
graph's nodes, by the modules their names are scoped in (:mod:`.onnx_attributes`); the port's
from its cells (:func:`port_layer`). :func:`compare_layers` says what differs.

Example:
    >>> ref = torch_layer({"class": "BatchNorm2d", "eps": 1e-5, "momentum": 0.1})
    >>> port = Layer("batchnorm", {"eps": 1e-5, "momentum": 0.9})  # a 0.1 copied from torch, read as MindSpore's
    >>> [(d.attribute, d.port, d.reference) for d in compare_layers(port, ref)]
    [('momentum', 0.9, 0.1)]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

__all__ = [
    "Difference",
    "Layer",
    "compare_layers",
    "dumped_layers",
    "port_layer",
    "torch_layer",
    "torch_layers",
]

#: Activation modules of both frameworks (class names) -> one kind.
_ACTIVATIONS = {
    "ReLU": "relu",
    "ReLU6": "relu6",
    "LeakyReLU": "leaky_relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "SiLU": "silu",
    "Hardswish": "hardswish",
    "HSwish": "hardswish",
    "Hardsigmoid": "hardsigmoid",
    "HSigmoid": "hardsigmoid",
    "ELU": "elu",
    "Mish": "mish",
    "Softplus": "softplus",
    "GELU": "gelu",
    "FastGelu": "gelu",
}


@dataclass(frozen=True)
class Layer:
    """One layer's kind and attributes, in torch's conventions (see the module)."""

    kind: str
    values: Mapping[str, Any]


@dataclass(frozen=True)
class Difference:
    """An attribute of a port layer that differs from the original's: both values, torch's convention."""

    attribute: str
    port: Any
    reference: Any
    kind: str  # the layer's kind


def _pair(value: Any, dims: int = 2) -> tuple[int, ...]:
    if isinstance(value, (list, tuple)):
        values = tuple(int(v) for v in value)
        return values if len(values) == dims else (values * dims)[:dims]
    return (int(value),) * dims


def _torch_pads(padding: Any, dims: int) -> Any:
    """torch's ``padding`` (an int, one per dimension, or ``"same"``/``"valid"``) as ``(begin, end)`` pairs."""
    if isinstance(padding, str):
        return "valid" if padding == "valid" else padding
    return tuple((p, p) for p in _pair(padding, dims))


def torch_layer(record: Mapping[str, Any]) -> Layer | None:
    """The :class:`Layer` of one module the dump recorded (``{"class": ..., attributes}``), or ``None``."""
    name = str(record.get("class", ""))
    get = record.get
    if name.startswith("BatchNorm") or name == "SyncBatchNorm":
        return Layer("batchnorm", {"eps": get("eps"), "momentum": get("momentum")})
    if name in ("LayerNorm", "GroupNorm") and "eps" in record:
        return Layer(name.lower(), {"eps": get("eps")})
    if name in _ACTIVATIONS:
        values: dict[str, Any] = {"function": _ACTIVATIONS[name]}
        if name == "GELU":
            values["approximate"] = get("approximate", "none")
        if name == "LeakyReLU":
            values["negative_slope"] = get("negative_slope", 0.01)
        return Layer("activation", values)
    if name == "Softmax" and get("dim") is not None:
        return Layer("softmax", {"dim": get("dim")})
    if name in ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d") and "p" in record:
        return Layer("dropout", {"p": get("p")})
    if name in ("Conv1d", "Conv2d", "Conv3d") and "kernel_size" in record:
        dims = int(name[-2])
        return Layer(
            "conv",
            {
                "kernel": _pair(get("kernel_size"), dims),
                "stride": _pair(get("stride", 1), dims),
                "dilation": _pair(get("dilation", 1), dims),
                "pads": _torch_pads(get("padding", 0), dims),
                "padding_mode": get("padding_mode", "zeros"),
            },
        )
    if name in ("MaxPool1d", "MaxPool2d", "MaxPool3d", "AvgPool1d", "AvgPool2d", "AvgPool3d"):
        dims = int(name[-2])
        stride = get("stride") if get("stride") not in (None, []) else get("kernel_size")
        values = {
            "function": "max" if name.startswith("Max") else "average",
            "kernel": _pair(get("kernel_size"), dims),
            "stride": _pair(stride, dims),
            "pads": _torch_pads(get("padding", 0), dims),
            "ceil_mode": bool(get("ceil_mode", False)),
        }
        if name.startswith("Avg"):
            values["count_include_pad"] = bool(get("count_include_pad", True))
        return Layer("pool", values)
    if name == "Upsample" and "mode" in record:
        return _resize(get("mode"), get("align_corners"))
    return None


_RESIZE_MODES = {"bilinear": "linear", "linear": "linear", "trilinear": "linear", "bicubic": "cubic"}


def _resize(mode: Any, align_corners: Any) -> Layer:
    """An upsampling layer: its interpolation (nearest, linear, cubic) and, where it matters, ``align_corners``."""
    kind = _RESIZE_MODES.get(str(mode), str(mode))
    return Layer(
        "resize", {"mode": kind, "align_corners": bool(align_corners) if kind != "nearest" else None}
    )


def torch_layers(modules: Mapping[str, Mapping[str, Any]]) -> dict[str, Layer]:
    """Module path -> :class:`Layer`, for the modules of a dump's ``modules`` that are layers of a known kind."""
    found = {}
    for path, record in modules.items():
        layer = torch_layer(record)
        if layer is not None:
            found[path] = layer
    return found


def dumped_layers(folder: str) -> dict[str, Layer] | None:
    """The layers a dump folder's manifest records, or ``None`` when it was written before it recorded them."""
    import json
    import os

    from graphaudit.errors import ArgumentError
    from graphaudit.reference import MANIFEST

    try:
        with open(os.path.join(folder, MANIFEST), encoding="utf-8") as f:
            manifest = json.load(f)
    except (OSError, ValueError) as err:
        raise ArgumentError(f"reference= {folder!r}: its {MANIFEST} cannot be read ({err}).") from err
    modules = manifest.get("modules") if isinstance(manifest, dict) else None
    return torch_layers(modules) if isinstance(modules, dict) else None


# -- the port: MindSpore cells -------------------------------------------------------------


def _prim_attrs(cell: Any, name: str) -> dict[str, Any]:
    prim = getattr(cell, name, None)
    return dict(getattr(prim, "init_attrs", {}) or {})


def _ms_pads(pad_mode: str, padding: Any, dims: int) -> Any:
    """MindSpore's ``pad_mode``/``padding`` as ``(begin, end)`` pairs (``"same"``/``"valid"`` kept as such)."""
    mode = str(pad_mode).lower()
    if mode in ("same", "valid"):
        return mode
    if isinstance(padding, (list, tuple)) and len(padding) == 2 * dims:
        return tuple((int(padding[2 * i]), int(padding[2 * i + 1])) for i in range(dims))
    return tuple((p, p) for p in _pair(padding, dims))


def _pool(cell: Any, function: str, dims: int) -> Layer | None:
    """A ``mindspore.nn`` pool: its pads, ``ceil_mode`` and ``count_include_pad`` are its primitive's."""
    kernel, stride = _pair(cell.kernel_size, dims), _pair(cell.stride, dims)
    mode = str(getattr(cell, "pad_mode", "VALID")).lower()
    prim = _prim_attrs(cell, "max_pool" if function == "max" else "avg_pool")
    values: dict[str, Any] = {"function": function, "kernel": kernel, "stride": stride}
    if mode == "pad":
        pads = prim.get("pads", prim.get("pad", ()))
        pads = tuple(pads)[-dims:] if function == "max" else tuple(pads)[-2 * dims :]
        values["pads"] = (
            tuple((int(p), int(p)) for p in pads)
            if function == "max"
            else tuple((int(pads[2 * i]), int(pads[2 * i + 1])) for i in range(dims))
        )
    else:
        values["pads"] = mode if mode == "same" else tuple((0, 0) for _ in range(dims))
    values["ceil_mode"] = bool(prim.get("ceil_mode", False))
    if function == "average":
        values["count_include_pad"] = bool(prim.get("count_include_pad", True))
    return Layer("pool", values)


def port_layer(cell: Any) -> Layer | None:
    """The :class:`Layer` of a MindSpore cell (``mindspore.nn`` or ``mindspore.mint.nn``), or ``None``."""
    name = type(cell).__name__
    if "BatchNorm" in name and hasattr(cell, "momentum"):
        # mindspore.nn's BatchNorm keeps 1 - its argument (torch's convention) in .momentum; mint.nn's
        # takes torch's number as it is: both hold torch's convention here
        momentum = float(cell.momentum) if cell.momentum is not None else None
        return Layer("batchnorm", {"eps": float(cell.eps), "momentum": momentum})
    if name in ("LayerNorm", "LayerNormExt"):
        eps = getattr(cell, "eps", getattr(cell, "epsilon", None))
        return Layer("layernorm", {"eps": float(eps)}) if eps is not None else None
    if name == "GroupNorm" and hasattr(cell, "eps"):
        return Layer("groupnorm", {"eps": float(cell.eps)})
    if name in _ACTIVATIONS:
        values: dict[str, Any] = {"function": _ACTIVATIONS[name]}
        if name == "GELU":
            approximate = getattr(cell, "approximate", "none")
            values["approximate"] = "tanh" if approximate in (True, "tanh") else "none"
        if name == "FastGelu":
            values["approximate"] = "fast"  # x * sigmoid(1.702 x): neither of torch's
        if name == "LeakyReLU":
            values["negative_slope"] = float(getattr(cell, "alpha", getattr(cell, "negative_slope", 0.01)))
        return Layer("activation", values)
    if name == "Softmax":
        axis = _prim_attrs(cell, "softmax").get("axis", getattr(cell, "dim", None))
        axis = axis[0] if isinstance(axis, (list, tuple)) and len(axis) == 1 else axis
        return Layer("softmax", {"dim": axis}) if isinstance(axis, int) else None
    if name in ("Dropout", "DropoutExt", "Dropout1d", "Dropout2d", "Dropout2dExt", "Dropout3d"):
        p = getattr(cell, "p", None)
        if p is None and getattr(cell, "keep_prob", None) is not None:
            p = 1.0 - float(cell.keep_prob)
        return Layer("dropout", {"p": float(p)}) if p is not None else None
    if name in ("Conv1d", "Conv2d", "Conv3d") and hasattr(cell, "pad_mode"):
        dims = int(name[-2])
        return Layer(
            "conv",
            {
                "kernel": _pair(cell.kernel_size, dims),
                "stride": _pair(cell.stride, dims),
                "dilation": _pair(cell.dilation, dims),
                "pads": _ms_pads(cell.pad_mode, cell.padding, dims),
                "padding_mode": "zeros"
                if str(cell.pad_mode).lower() in ("pad", "same", "valid")
                else cell.pad_mode,
            },
        )
    if name in ("MaxPool2d", "AvgPool2d") and hasattr(cell, "pad_mode"):
        return _pool(cell, "max" if name.startswith("Max") else "average", 2)
    if name in ("Upsample", "UpsampleExt") and hasattr(cell, "mode"):
        return _resize(cell.mode, getattr(cell, "align_corners", None))
    if name in ("MaxPool2dExt", "AvgPool2dExt"):  # mint.nn's: torch's arguments as they are
        return torch_layer({**vars(cell), "class": name[: -len("Ext")]})
    return None


# -- the comparison -------------------------------------------------------------------------


def _same_pads(kernel: Iterable[int], dilation: Iterable[int]) -> tuple[tuple[int, int], ...]:
    """What ``"same"`` pads at stride 1: ``d * (k - 1)`` in all, the smaller half first."""
    pads = []
    for k, d in zip(kernel, dilation):
        total = d * (k - 1)
        pads.append((total // 2, total - total // 2))
    return tuple(pads)


def _pads(layer: Layer) -> Any:
    """The layer's pads, ``"same"`` at stride 1 spelt out (the same on any input then)."""
    pads = layer.values.get("pads")
    if pads == "valid":
        return tuple((0, 0) for _ in layer.values["kernel"])
    if pads == "same" and all(s == 1 for s in layer.values["stride"]):
        return _same_pads(
            layer.values["kernel"], layer.values.get("dilation", (1,) * len(layer.values["kernel"]))
        )
    return pads


def _close(a: Any, b: Any) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return a is not None and b is not None and abs(float(a) - float(b)) <= 1e-9 + 1e-6 * abs(float(b))
    return bool(a == b)


def compare_layers(port: Layer, reference: Layer) -> list[Difference]:
    """What differs between a port layer and the original's it stands for (nothing for layers of other kinds)."""
    if port.kind != reference.kind:
        return []
    mine, theirs = dict(port.values), dict(reference.values)
    if port.kind in ("conv", "pool"):
        if mine.get("kernel") != theirs.get("kernel"):
            return []  # another layer than the original's (GA632 says so for a conv): not paired by attributes
        mine["pads"], theirs["pads"] = _pads(port), _pads(reference)
        if mine.get("function") != theirs.get("function"):
            return [Difference("function", mine["function"], theirs["function"], port.kind)]
        unpadded = isinstance(theirs["pads"], tuple) and not any(p for pair in theirs["pads"] for p in pair)
        if port.kind == "pool" and mine["pads"] == theirs["pads"] and unpadded:
            mine.pop("count_include_pad", None)  # no padding: nothing to count in or out
            theirs.pop("count_include_pad", None)
    if port.kind == "activation" and mine.get("function") != theirs.get("function"):
        return [Difference("function", mine["function"], theirs["function"], port.kind)]
    differences = []
    for attribute, value in theirs.items():
        if attribute in mine and not _close(mine[attribute], value):
            differences.append(Difference(attribute, mine[attribute], value, port.kind))
    return differences

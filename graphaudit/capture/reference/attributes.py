"""The attributes that decide what a layer computes, read on both sides of a port and compared.

A :class:`Layer` is one layer's kind (``batchnorm``, ``layernorm``, ``activation``,
``softmax``, ``dropout``, ``conv``, ``pool``) and its attributes in one convention, torch's:

- ``momentum``: the weight of the batch's statistics in the running ones (torch's 0.1;
  MindSpore's ``nn.BatchNorm2d(momentum=0.9)`` and ONNX's ``momentum`` weigh the running
  statistics: ``1 - m``; ``mint.nn.BatchNorm2d`` takes torch's);
- ``approximate``: GELU's ``"none"`` (erf) or ``"tanh"`` (MindSpore's ``nn.GELU()`` default);
- ``p``: the dropout *rate* (MindSpore 1.x's ``keep_prob`` is ``1 - p``);
- ``pads``: per spatial dimension ``(begin, end)``, or ``"same"`` / ``"valid"`` when the pad
  depends on the input's size; ``kernel``, ``stride``, ``dilation`` as tuples.

The original's layers come from a dump's ``manifest.json`` (:func:`torch_layers`) or an ONNX
graph's nodes, by the modules their names are scoped in (:func:`onnx_layers`); the port's
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
    "onnx_layers",
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
_ONNX_ACTIVATIONS = {
    "Relu": "relu",
    "LeakyRelu": "leaky_relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "HardSwish": "hardswish",
    "HardSigmoid": "hardsigmoid",
    "Elu": "elu",
    "Mish": "mish",
    "Softplus": "softplus",
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
    return None


def torch_layers(modules: Mapping[str, Mapping[str, Any]]) -> dict[str, Layer]:
    """Module path -> :class:`Layer`, for the modules of a dump's ``modules`` that are layers of a known kind."""
    found = {}
    for path, record in modules.items():
        layer = torch_layer(record)
        if layer is not None:
            found[path] = layer
    return found


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
    if name in ("MaxPool2dExt", "AvgPool2dExt"):  # mint.nn's: torch's arguments as they are
        return torch_layer({**vars(cell), "class": name[: -len("Ext")]})
    return None


# -- ONNX: node attributes, by the module a node was traced in -----------------------------


def onnx_layers(path: str) -> dict[str, Layer]:
    """Module path -> :class:`Layer`, from the nodes of the ONNX file at *path* (one per module).

    A module whose own nodes (not its children's) are one layer op is that layer;
    ``torch.onnx.export`` before opset 20 writes GELU as ``Erf`` (exact) or ``Tanh`` in
    ``x * 0.5 * (1 + ...)`` (tanh), read as such.
    """
    import onnx
    from onnx import helper

    from graphaudit.capture.reference.onnx_run import _wrapper

    graph = onnx.load(path, load_external_data=False).graph
    scoped = [(node, _module_path(node.name)) for node in graph.node]
    wrapper = _wrapper(scoped, {init.name for init in graph.initializer})  # Wrapper(model)'s "model."
    own: dict[str, list[Any]] = {}
    for node, module in scoped:
        if wrapper:
            module = module[len(wrapper) + 1 :] if module != wrapper else ""
        own.setdefault(module, []).append(node)
    found = {}
    for module, nodes in own.items():
        ops = [n.op_type for n in nodes if n.op_type not in ("Constant", "Identity", "Shape", "Cast")]
        attrs = [{a.name: helper.get_attribute_value(a) for a in n.attribute} for n in nodes]
        layer = _onnx_layer(ops, {n.op_type: a for n, a in zip(nodes, attrs)})
        if layer is not None and module:
            found[module] = layer
    return found


def _module_path(node_name: str) -> str:
    """The module a node was traced in: the exporter's scopes, a called ``Sequential``'s children scoped
    by their name from its parent (``/conv1/conv1.0/Conv`` is module ``conv1.0``, not ``conv1.conv1.0``).

    Example:
        >>> _module_path("/stage2/stage2.0/branch1/branch1.0/Conv"), _module_path("/encoder/layer.0/attention/Add")
        ('stage2.0.branch1.0', 'encoder.layer.0.attention')
        >>> _module_path("Add_3")
        ''
    """
    if not node_name.startswith("/"):
        return ""
    parts: list[str] = []
    for scope in (part for part in node_name.split("/")[1:-1] if part):
        if parts and scope.startswith(parts[-1] + "."):
            parts[-1] = scope  # the child of a Sequential: its name already holds the parent's
        else:
            parts.append(scope)
    return ".".join(parts)


def _onnx_pads(attrs: Mapping[str, Any], dims: int) -> Any:
    auto = attrs.get("auto_pad", b"NOTSET")
    auto = auto.decode() if isinstance(auto, bytes) else str(auto)
    if auto.startswith("SAME"):
        return "same"
    pads = list(attrs.get("pads", [0] * 2 * dims))
    return tuple((int(pads[i]), int(pads[i + dims])) for i in range(dims))


def _onnx_layer(ops: list[str], attrs: Mapping[str, Mapping[str, Any]]) -> Layer | None:
    """The layer a module's own ONNX ops make, or ``None`` when they are not one known layer."""
    if ops == ["BatchNormalization"]:
        a = attrs["BatchNormalization"]
        return Layer(
            "batchnorm",
            {"eps": float(a.get("epsilon", 1e-5)), "momentum": 1.0 - float(a.get("momentum", 0.9))},
        )
    if ops == ["LayerNormalization"]:
        return Layer("layernorm", {"eps": float(attrs["LayerNormalization"].get("epsilon", 1e-5))})
    if ops == ["Gelu"]:
        approximate = attrs["Gelu"].get("approximate", b"none")
        return Layer(
            "activation",
            {
                "function": "gelu",
                "approximate": approximate.decode() if isinstance(approximate, bytes) else approximate,
            },
        )
    if "Erf" in ops and set(ops) <= {"Erf", "Div", "Mul", "Add"}:
        return Layer("activation", {"function": "gelu", "approximate": "none"})
    if "Tanh" in ops and "Pow" in ops and set(ops) <= {"Tanh", "Pow", "Mul", "Add"}:
        return Layer("activation", {"function": "gelu", "approximate": "tanh"})
    if len(ops) == 1 and ops[0] in _ONNX_ACTIVATIONS:
        values: dict[str, Any] = {"function": _ONNX_ACTIVATIONS[ops[0]]}
        if ops[0] == "LeakyRelu":
            values["negative_slope"] = float(attrs["LeakyRelu"].get("alpha", 0.01))
        return Layer("activation", values)
    if ops == ["Softmax"]:
        return Layer("softmax", {"dim": int(attrs["Softmax"].get("axis", -1))})
    if ops in (["Conv"], ["Conv", "Add"]):
        a = attrs["Conv"]
        kernel = tuple(int(k) for k in a.get("kernel_shape", ()))
        dims = len(kernel)
        if not dims:
            return None
        return Layer(
            "conv",
            {
                "kernel": kernel,
                "stride": tuple(int(s) for s in a.get("strides", [1] * dims)),
                "dilation": tuple(int(d) for d in a.get("dilations", [1] * dims)),
                "pads": _onnx_pads(a, dims),
                "padding_mode": "zeros",
            },
        )
    if ops in (["MaxPool"], ["AveragePool"]):
        a = attrs[ops[0]]
        kernel = tuple(int(k) for k in a.get("kernel_shape", ()))
        dims = len(kernel)
        values = {
            "function": "max" if ops[0] == "MaxPool" else "average",
            "kernel": kernel,
            "stride": tuple(int(s) for s in a.get("strides", [1] * dims)),
            "pads": _onnx_pads(a, dims),
            "ceil_mode": bool(a.get("ceil_mode", 0)),
        }
        if ops[0] == "AveragePool":
            values["count_include_pad"] = bool(a.get("count_include_pad", 0))
        return Layer("pool", values)
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

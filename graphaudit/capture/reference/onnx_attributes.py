"""An ONNX original's layer attributes, read off its nodes by the module each was traced in.

``torch.onnx.export`` scopes each node by the modules it was traced in; a module whose own
nodes (not its children's) are one layer op is that layer, its attributes the node's
(``BatchNormalization``'s ``epsilon`` and ``momentum``, ``Conv``'s ``pads``...), in the
conventions of :mod:`.attributes`.

Example:
    >>> _module_path("/stage2/stage2.0/branch1/branch1.0/Conv"), _module_path("/encoder/layer.0/attention/Add")
    ('stage2.0.branch1.0', 'encoder.layer.0.attention')
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from graphaudit.capture.reference.attributes import Layer, _resize

__all__ = ["onnx_layers"]

#: The ops an exporter adds around a ``Resize`` to compute its output size.
_RESIZE_SIZING = {"Concat", "Slice", "Gather", "Unsqueeze", "Mul", "Div", "Floor"}


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


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
    if ops.count("Resize") == 1 and set(ops) <= _RESIZE_SIZING | {"Resize"}:
        a = attrs["Resize"]
        mode = _text(a.get("mode", b"nearest"))
        transform = _text(a.get("coordinate_transformation_mode", b"half_pixel"))
        return _resize(mode, transform == "align_corners")
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

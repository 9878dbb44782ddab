"""Which element-wise activation a call or operation applies, and what range its output has.

:func:`activation_name` names the activation a node of the traced graph applies: a leaf call
of a MindSpore activation cell (``nn.ReLU``, ``nn.Tanh``, the ``activation`` sub-cell of
``nn.Dense(activation="sigmoid")``...) or a functional operation (``ops.relu``,
``ops.tanh``, ``Tensor.sigmoid``...). :data:`OUTPUT_RANGE` says what values each can
produce, for the rules that compare an output with its targets.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> net = nn.SequentialCell([nn.Dense(4, 3, activation="tanh")])
    >>> graph = graphaudit.to_networkx(net, inputs=Tensor(np.ones((2, 4), np.float32)))
    >>> activation_name(graph, "call:0.activation#1"), OUTPUT_RANGE["tanh"]
    ('tanh', (-1.0, 1.0))
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from graphaudit import graph as g

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["ELEMENTWISE", "OUTPUT_RANGE", "SATURATING", "activation_name"]

_CELLS: Final = {
    "ReLU": "relu",
    "ReLU6": "relu6",
    "Tanh": "tanh",
    "Sigmoid": "sigmoid",
    "Softmax": "softmax",
    "LogSoftmax": "log_softmax",
    "GELU": "gelu",
    "FastGelu": "gelu",
    "SiLU": "silu",
    "HSwish": "hswish",
    "Hardswish": "hswish",
    "HSigmoid": "hsigmoid",
    "Hardsigmoid": "hsigmoid",
    "Hardtanh": "hardtanh",
    "Softplus": "softplus",
    "Softsign": "softsign",
    "LeakyReLU": "leaky_relu",
    "PReLU": "prelu",
    "ELU": "elu",
    "CELU": "elu",
    "SeLU": "selu",
    "Mish": "mish",
}
_OPS: Final = {
    "relu": "relu",
    "relu6": "relu6",
    "tanh": "tanh",
    "sigmoid": "sigmoid",
    "softmax": "softmax",
    "softmaxext": "softmax",
    "logsoftmax": "log_softmax",
    "logsoftmaxext": "log_softmax",
    "gelu": "gelu",
    "fastgelu": "gelu",
    "silu": "silu",
    "hswish": "hswish",
    "hardswish": "hswish",
    "hsigmoid": "hsigmoid",
    "hardsigmoid": "hsigmoid",
    "hardtanh": "hardtanh",
    "softplus": "softplus",
    "softsign": "softsign",
    "leakyrelu": "leaky_relu",
    "elu": "elu",
    "selu": "selu",
    "mish": "mish",
    "exp": "exp",
}

#: The activations whose derivative vanishes away from zero (the saturating ones of GA309).
SATURATING: Final = frozenset({"sigmoid", "tanh"})
#: Activations that change values one element at a time, keeping the shape (widths pass through).
ELEMENTWISE: Final = frozenset(set(_CELLS.values()) - {"softmax", "log_softmax"} | {"exp"})
#: The closed range of values each bounded activation can output; ``None`` for an open end.
OUTPUT_RANGE: Final[dict[str, tuple[float | None, float | None]]] = {
    "sigmoid": (0.0, 1.0),
    "softmax": (0.0, 1.0),
    "hsigmoid": (0.0, 1.0),
    "tanh": (-1.0, 1.0),
    "hardtanh": (-1.0, 1.0),
    "softsign": (-1.0, 1.0),
    "relu": (0.0, None),
    "relu6": (0.0, 6.0),
    "softplus": (0.0, None),
    "exp": (0.0, None),
    "log_softmax": (None, 0.0),
}


def activation_name(graph: nx.MultiDiGraph, node: str | None) -> str | None:
    """The activation *node* applies (see :data:`OUTPUT_RANGE` for the names), or ``None``.

    Cells count only when MindSpore defines them (a user-written ``ReLU`` cell might do
    anything); operations by their normalised type.
    """
    if node is None or node not in graph:
        return None
    attrs = graph.nodes[node]
    if attrs["kind"] == g.OP:
        return _OPS.get(attrs["op_type"])
    if attrs["kind"] != g.CALL or not attrs.get("leaf"):
        return None
    cell = attrs.get("cell")
    module = str(graph.nodes[cell].get("module", "")) if cell and cell in graph else ""
    if not module.startswith("mindspore."):
        return None
    return _CELLS.get(attrs["class_name"])

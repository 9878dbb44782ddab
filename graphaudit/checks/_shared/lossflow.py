"""What the network's output is, and what the loss expects of it (shared by the GA4xx checks).

Two questions, answered from the traced graphs:

- :func:`output_activation`: which normalisation ends the backbone? Starting at
  ``output:0`` it walks back through shape-only operations (``reshape``, ``view``,
  ``squeeze``, ``transpose``, ``cast``, ``x[...]``...) and pass-through cells
  (``nn.Flatten``, ``nn.Identity``, ``nn.Dropout``) to the node that made the values, and
  says ``"sigmoid"``, ``"softmax"``, ``"log_softmax"``, ``"none"`` (unbounded logits: a
  MindSpore layer such as ``Dense``/``Conv2d`` or an affine operation) or ``"unknown"``
  (what made the values is not visible: a user-written leaf cell, an operation the tracer
  cannot see, or a bounded operation such as ``exp`` or ``tanh``).
- :func:`loss_expectation`: what does the loss want as its first argument?
  ``"logits-sigmoid"`` (it applies its own sigmoid: ``BCEWithLogitsLoss``),
  ``"probabilities"`` (``BCELoss``), ``"logits-softmax"`` (it applies its own softmax:
  ``CrossEntropyLoss``, ``SoftmaxCrossEntropyWithLogits``), ``"log-probabilities"``
  (``NLLLoss``) or ``None``. Built-in loss classes of ``mindspore.nn`` / ``mindspore.mint.nn``
  are known by class; any other loss cell by the operations that consume its first input
  in the loss graph (:class:`~graphaudit.evidence.loss.LossTrace`), so a custom cell that calls
  ``ops.binary_cross_entropy_with_logits``, or applies ``ops.sigmoid`` and then
  ``ops.binary_cross_entropy``, expects logits.

Every GA4xx finding names as its subject the class name of the loss cell
(``type(loss_fn).__name__``, e.g. ``BCEWithLogitsLoss`` or a custom ``MaskedBCE``): the
loss is the one object each of these findings is about, whether it came as ``loss_fn=``,
inside a ``WithLossCell`` / ``TrainOneStepCell`` or a ``Model``. The message names the
activation cell or operation, and the finding's nodes are the activation's node and
``output:0``.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> net = nn.SequentialCell([nn.Dense(4, 1, activation="sigmoid"), nn.Flatten()])
    >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((2, 4), np.float32)))
    >>> output_activation(g)
    ('sigmoid', 'call:0.activation#1')
    >>> loss_expectation(nn.BCEWithLogitsLoss(), None)
    ('logits-sigmoid', 'nn.BCEWithLogitsLoss applies a sigmoid to its input itself')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import networkx as nx

from graphaudit import graph as g

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = [
    "ACTIVATIONS",
    "EXPECTATIONS",
    "Pairing",
    "describe_node",
    "loss_expectation",
    "output_activation",
    "pairing",
]

ACTIVATIONS: Final = ("sigmoid", "softmax", "log_softmax", "none", "unknown")
EXPECTATIONS: Final = ("logits-sigmoid", "probabilities", "logits-softmax", "log-probabilities")

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

# Losses known by class (looked up along the MRO, only for classes defined by MindSpore).
LOSS_CLASSES: Final = {
    "BCEWithLogitsLoss": "logits-sigmoid",
    "BCELoss": "probabilities",
    "CrossEntropyLoss": "logits-softmax",
    "SoftmaxCrossEntropyWithLogits": "logits-softmax",
    "NLLLoss": "log-probabilities",
}
# The same losses seen as operations inside a custom loss cell (op_type as recorded on
# MindSpore 2.10: ``ops.binary_cross_entropy_with_logits`` and
# ``mint.nn.functional.binary_cross_entropy_with_logits`` give
# ``binarycrossentropywithlogits``, the ``ops.BCEWithLogitsLoss`` primitive
# ``bcewithlogitsloss``...).
LOSS_OPS: Final = {
    "binarycrossentropywithlogits": "logits-sigmoid",
    "bcewithlogitsloss": "logits-sigmoid",
    "binarycrossentropy": "probabilities",
    "crossentropy": "logits-softmax",
    "softmaxcrossentropywithlogits": "logits-softmax",
    "sparsesoftmaxcrossentropywithlogits": "logits-softmax",
    "nllloss": "log-probabilities",
}
# Transformations a custom loss may apply to its input before the loss operation, and
# what the input then has to be: (applied, what the loss operation expects) -> expectation.
_LOSS_PREP_OPS: Final = {
    "sigmoid": "sigmoid",
    "softmax": "softmax",
    "softmaxext": "softmax",
    "logsoftmax": "log_softmax",
    "logsoftmaxext": "log_softmax",
    "log": "log",
}
_RANGE_KEEPING_OPS: Final = frozenset({"clamp", "clip", "clipbyvalue"})
_PREPARED: Final = {
    ((), "logits-sigmoid"): "logits-sigmoid",
    ((), "probabilities"): "probabilities",
    ((), "logits-softmax"): "logits-softmax",
    ((), "log-probabilities"): "log-probabilities",
    (("sigmoid",), "probabilities"): "logits-sigmoid",
    (("log_softmax",), "log-probabilities"): "logits-softmax",
    (("softmax", "log"), "log-probabilities"): "logits-softmax",
    (("log",), "log-probabilities"): "probabilities",
}


def _flows_in(graph: nx.MultiDiGraph, node: str) -> list[tuple[str, dict[str, Any]]]:
    return [(s, d) for s, _, d in graph.in_edges(node, data=True) if d["kind"] == g.FLOWS]


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


def output_activation(graph: nx.MultiDiGraph) -> tuple[str, str | None]:
    """``(activation, node)``: the normalisation that makes the network's first output.

    *activation* is one of :data:`ACTIVATIONS`; *node* is the call or op node that applied
    it (for ``"none"`` the layer or operation that made the logits), ``None`` when
    ``output:0`` has no visible producer (or the graph has no traced output).

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(4, 3), nn.Softmax(), nn.Dropout(p=0.2)])
        >>> output_activation(graphaudit.to_networkx(net, inputs=Tensor(np.ones((2, 4), np.float32))))
        ('softmax', 'call:1#1')
    """
    if "output:0" not in graph:
        return "unknown", None
    node = _data_producer(graph, "output:0")
    seen: set[str] = set()
    while node is not None and node not in seen:
        seen.add(node)
        attrs = graph.nodes[node]
        kind = attrs["kind"]
        if kind == g.OP:
            op_type = attrs["op_type"]
            if op_type in ACTIVATION_OPS:
                return ACTIVATION_OPS[op_type], node
            if op_type in SHAPE_ONLY_OPS:
                node = _data_producer(graph, node)
                continue
            return ("unknown" if op_type in BOUNDED_OPS else "none"), node
        if kind == g.CALL:
            class_name = attrs["class_name"]
            if not attrs["leaf"]:
                # A non-leaf call is the producer only when its body handed back a tensor
                # made outside it (a pass-through: it then encloses nothing) or made by
                # something the tracer cannot see.
                encloses = any(d["kind"] == g.ENCLOSES for _, _, d in graph.out_edges(node, data=True))
                if encloses or len(_flows_in(graph, node)) != 1:
                    return "unknown", node
                node = _data_producer(graph, node)
                continue
            if class_name in ACTIVATION_CELLS:
                return ACTIVATION_CELLS[class_name], node
            if class_name in PASS_THROUGH_CELLS:
                node = _data_producer(graph, node)
                continue
            if class_name in BOUNDED_CELLS or not _is_mindspore_cell(graph, node):
                return "unknown", node  # a user-written leaf cell: its body is not traced
            return "none", node
        # The network's own input (or a parameter) returned as it is: raw values.
        return ("none", node) if kind == g.INPUT else ("unknown", node)
    return "unknown", None


def _builtin_loss(loss_fn: Any) -> tuple[str, str] | None:
    for cls in type(loss_fn).__mro__:
        module = getattr(cls, "__module__", "") or ""
        if cls.__name__ in LOSS_CLASSES and module.startswith("mindspore."):
            prefix = "mint.nn" if module.startswith("mindspore.mint") else "nn"
            return LOSS_CLASSES[cls.__name__], f"{prefix}.{cls.__name__}"
    return None


_OWN_ACTIVATION = {
    "logits-sigmoid": "applies a sigmoid to its input itself",
    "probabilities": "expects probabilities in [0, 1] as its input",
    "logits-softmax": "applies its own log-softmax to its input",
    "log-probabilities": "expects log-probabilities (the output of a LogSoftmax) as its input",
}


def _loss_from_graph(loss_graph: nx.MultiDiGraph) -> tuple[str, str] | None:
    """Follow ``input:0`` (the logits) forward to the first loss operation that consumes it."""
    if "input:0" not in loss_graph:
        return None
    frontier: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [("input:0", (), ())]
    seen: set[str] = set()
    while frontier:
        node, applied, names = frontier.pop(0)
        targets = sorted(
            {t for _, t, d in loss_graph.out_edges(node, data=True) if d["kind"] == g.FLOWS},
            key=lambda t: loss_graph.nodes[t].get("order", 0),
        )
        for target in targets:
            if target in seen:
                continue
            seen.add(target)
            attrs = loss_graph.nodes[target]
            if attrs["kind"] == g.OP:
                op_type, label = attrs["op_type"], attrs["op"]
                native = LOSS_OPS.get(op_type)
            elif attrs["kind"] == g.CALL:
                op_type, label = attrs["class_name"], f"a {attrs['class_name']} cell"
                native = LOSS_CLASSES.get(op_type)
            else:
                continue
            if native is not None:
                expects = _PREPARED.get((applied, native))
                if expects is None:
                    continue
                return expects, ", then ".join([*names, label])
            if attrs["kind"] == g.OP and (op_type in SHAPE_ONLY_OPS or op_type in _RANGE_KEEPING_OPS):
                frontier.append((target, applied, names))
            elif attrs["kind"] == g.OP and op_type in _LOSS_PREP_OPS and len(applied) < 2:
                frontier.append((target, (*applied, _LOSS_PREP_OPS[op_type]), (*names, label)))
            elif attrs["kind"] == g.CALL and op_type in ACTIVATION_CELLS and len(applied) < 2:
                frontier.append((target, (*applied, ACTIVATION_CELLS[op_type]), (*names, label)))
            elif attrs["kind"] == g.CALL and op_type in PASS_THROUGH_CELLS:
                frontier.append((target, applied, names))
    return None


def loss_expectation(loss_fn: Any, loss_graph: nx.MultiDiGraph | None) -> tuple[str | None, str]:
    """``(expects, evidence)``: what *loss_fn* wants as its first argument, and why we think so.

    *expects* is one of :data:`EXPECTATIONS`, or ``None`` when the loss is unknown or not a
    classification loss. Built-in MindSpore losses are known by class; other cells by the
    operations of *loss_graph* (``loss_fn(logits, label)`` traced with the loss expanded)
    that consume ``input:0``, through shape-only operations.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, ops, Tensor
        >>> class MaskedBCE(nn.Cell):
        ...     def construct(self, logits, labels):
        ...         return ops.binary_cross_entropy_with_logits(
        ...             logits.reshape(-1), labels.reshape(-1), ops.ones(4), ops.ones(4))
        >>> loss = MaskedBCE()
        >>> logits, labels = Tensor(np.zeros((4, 1), np.float32)), Tensor(np.ones((4, 1), np.float32))
        >>> loss_graph = graphaudit.to_networkx(loss, inputs=(logits, labels))
        >>> loss_expectation(loss, loss_graph)  # doctest: +NORMALIZE_WHITESPACE
        ('logits-sigmoid', 'MaskedBCE applies a sigmoid to its input itself: it passes its input
         through ops.binary_cross_entropy_with_logits')
        >>> loss_expectation(nn.MSELoss(), None)
        (None, 'nn.MSELoss is not a classification loss graphaudit knows')
    """
    if loss_fn is None:
        return None, "no loss"
    builtin = _builtin_loss(loss_fn)
    if builtin is not None:
        expects, name = builtin
        return expects, f"{name} {_OWN_ACTIVATION[expects]}"
    builtin_module = (type(loss_fn).__module__ or "").startswith("mindspore.")
    name = f"nn.{type(loss_fn).__name__}" if builtin_module else type(loss_fn).__name__
    found = _loss_from_graph(loss_graph) if loss_graph is not None else None
    if found is not None:
        expects, chain = found
        return expects, f"{name} {_OWN_ACTIVATION[expects]}: it passes its input through {chain}"
    if loss_graph is None and not builtin_module:
        return None, f"{name} could not be traced"
    return None, f"{name} is not a classification loss graphaudit knows"


@dataclass(frozen=True)
class Pairing:
    """The network's output activation and its loss's expectation, as the GA4xx checks see them."""

    activation: str
    activation_node: str | None
    expects: str | None
    evidence: str
    loss_name: str

    @property
    def nodes(self) -> tuple[str, ...]:
        """The graph nodes a finding points at: the activation and ``output:0``."""
        return tuple(n for n in (self.activation_node, "output:0") if n is not None)


def _pairing(ctx: AuditContext) -> Pairing | None:
    from graphaudit.evidence.loss import LossTrace

    loss = ctx.get(LossTrace)
    if loss is None or "output:0" not in ctx.graph:
        return None
    activation, node = output_activation(ctx.graph)
    expects, evidence = loss_expectation(loss.loss_fn, loss.graph)
    return Pairing(activation, node, expects, evidence, loss.name)


def pairing(ctx: AuditContext) -> Pairing | None:
    """The output/loss pairing of an audit, computed once and shared by the GA4xx checks.

    ``None`` when the network's traced output has no tensor.
    """
    return ctx.shared(_pairing)

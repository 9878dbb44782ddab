"""What a loss does with its input, read from its traced graph (shared by the GA4xx pairings).

A custom loss cell is known by the operations that consume its input in the loss graph
(:class:`~graphaudit.evidence.loss.LossTrace`): :func:`loss_from_graph` follows the whole
input forward through the operations that hand it on (shape-only ones, clamps, pass-through
cells, a sigmoid or log-softmax the loss applies itself) to the first loss operation;
:func:`parts_reaching` carries, element by element, which node made each part of the input
(:mod:`~graphaudit.checks._shared.regions`) through the loss's index-moving operations too,
to every loss operation given a part of it as its first argument.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, ops, Tensor
    >>> class ClassPart(nn.Cell):
    ...     def construct(self, pred, target):
    ...         scores = pred[:, 2:]
    ...         return ops.binary_cross_entropy_with_logits(scores, target, ops.ones_like(scores), ops.ones_like(scores))
    >>> pred, target = Tensor(np.zeros((4, 5), np.float32)), Tensor(np.ones((4, 3), np.float32))
    >>> loss_graph = graphaudit.to_networkx(ClassPart(), inputs=(pred, target))
    >>> loss_from_graph(loss_graph)  # a slice of the input: still the input, for the plain walk
    ('logits-sigmoid', 'ops.binary_cross_entropy_with_logits')
    >>> made = np.repeat([[0, 0, 1, 1, 1]], 4, axis=0).astype(np.int32)  # 0: a box branch, 1: a class branch
    >>> parts_reaching(loss_graph, "input:0", made)  # only the class branch's part reaches it
    [({1}, 'logits-sigmoid', 'ops.binary_cross_entropy_with_logits')]
"""

from __future__ import annotations

from typing import Any, Final

import networkx as nx
import numpy as np

from graphaudit import graph as g
from graphaudit.checks._shared import regions
from graphaudit.checks._shared.outputs import ACTIVATION_CELLS, PASS_THROUGH_CELLS, SHAPE_ONLY_OPS

__all__ = ["LOSS_CLASSES", "LOSS_OPS", "loss_from_graph", "parts_reaching"]

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


def loss_from_graph(loss_graph: nx.MultiDiGraph, start: str = "input:0") -> tuple[str, str] | None:
    """Follow *start* (an input: the logits) forward to the first loss operation that consumes it."""
    if start not in loss_graph:
        return None
    frontier: list[tuple[str, tuple[str, ...], tuple[str, ...]]] = [(start, (), ())]
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
            step = _step(attrs, op_type, label, applied, names)
            if step is not None:
                frontier.append((target, *step))
    return None


def _step(
    attrs: dict[str, Any], op_type: str, label: str, applied: tuple[str, ...], names: tuple[str, ...]
) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """``(applied, names)`` after a node that hands the loss's input on (``None``: it does not)."""
    if attrs["kind"] == g.OP and (op_type in SHAPE_ONLY_OPS or op_type in _RANGE_KEEPING_OPS):
        return applied, names
    if attrs["kind"] == g.OP and op_type in _LOSS_PREP_OPS and len(applied) < 2:
        return (*applied, _LOSS_PREP_OPS[op_type]), (*names, label)
    if attrs["kind"] == g.CALL and op_type in ACTIVATION_CELLS and len(applied) < 2:
        return (*applied, ACTIVATION_CELLS[op_type]), (*names, label)
    if attrs["kind"] == g.CALL and op_type in PASS_THROUGH_CELLS:
        return applied, names
    return None


def _named(attrs: dict[str, Any]) -> tuple[str, str, str | None]:
    """``(op_type, label, native)`` of a loss graph's op or call node: *native* is its own expectation."""
    if attrs["kind"] == g.OP:
        return attrs["op_type"], attrs["op"], LOSS_OPS.get(attrs["op_type"])
    where = f" at '{attrs['path']}'" if attrs.get("path") else ""
    return attrs["class_name"], f"a {attrs['class_name']} cell{where}", LOSS_CLASSES.get(attrs["class_name"])


_Carried = tuple[np.ndarray, tuple[str, ...], tuple[str, ...]]  # origins, applied, names


def parts_reaching(
    loss_graph: nx.MultiDiGraph, start: str, codes: np.ndarray
) -> list[tuple[set[int], str, str]]:
    """``(origins, expects, chain)`` for each loss operation given part of *start* as its first argument.

    *codes* are the origins of *start*'s tensor (see :func:`~graphaudit.checks._shared.outputs.origins`);
    they are carried, element by element, through the index-moving operations of the loss
    (a detection loss's reshapes, concat, slices and transposes) and the operations that hand
    its input on; *origins* are those that reach the loss operation.
    """
    values: dict[tuple[str, int], _Carried] = {(start, 0): (codes, (), ())}
    reached: list[tuple[set[int], str, str]] = []
    nodes = [n for n, d in loss_graph.nodes(data=True) if d["kind"] in (g.OP, g.CALL)]
    for node in sorted(nodes, key=lambda n: loss_graph.nodes[n].get("order", 0)):
        inputs: dict[int, _Carried] = {}
        for source, _, data in loss_graph.in_edges(node, data=True):
            if data["kind"] == g.FLOWS and (source, data["src_slot"]) in values:
                inputs[data["dst_slot"]] = values[(source, data["src_slot"])]
        if not inputs:
            continue
        attrs = loss_graph.nodes[node]
        op_type, label, native = _named(attrs)
        if native is not None:
            if 0 in inputs and (expects := _PREPARED.get((inputs[0][1], native))) is not None:
                made = {int(c) for c in np.unique(inputs[0][0]) if c >= 0}
                reached.append((made, expects, ", then ".join([*inputs[0][2], label])))
            continue  # a loss operation: what it returns is a loss, not the input
        applied, names = inputs[min(inputs)][1:]
        shapes = {
            d["src_slot"]: list(g.shape_of(d))
            for _, _, d in loss_graph.out_edges(node, data=True)
            if d["kind"] == g.FLOWS
        }
        if attrs.get("layout"):
            carried = [inputs[i][0] if i in inputs else None for i in range(max(inputs) + 1)]
            outs = regions.carry(attrs["layout"], carried) or []
        elif 0 in inputs and (step := _step(attrs, op_type, label, applied, names)) is not None:
            applied, names = step
            outs = [regions.reshaped(inputs[0][0], shapes[0])] if 0 in shapes else []
        else:
            continue
        for slot, out in enumerate(outs):
            if out is not None:
                values[(node, slot)] = (out, applied, names)
    return reached

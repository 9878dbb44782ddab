"""The loss, as the training step calls it: what to try it on, and how to find it inside a network.

The loss-pairing checks (GA4xx) need to see what a loss does with its first input. A
MindSpore loss class is known by its class; a user-written one has to be traced. Given
separately, it is traced in the network's own capture session on the network's real output
(its first tensor) and the label (:func:`graphaudit.capture.capture` with ``loss=``); without
a real label, stand-ins are tried (zeros shaped like the output, then class indices), and when
the real output is rejected by value (``ops.binary_cross_entropy`` raises on CPU for logits
outside [0, 1]: exactly the bug GA402 looks for), stand-in logits of 0.5
(:func:`loss_attempts`). Called by a network-with-loss, it is traced where it is called, and
:func:`loss_inside` cuts its body out of the network's graph.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor
    >>> [(tuple(x.shape), str(y.dtype)) for x, y in loss_attempts(Tensor(np.zeros((2, 3), np.float32)), None)]
    [((2, 3), 'Float32'), ((2, 3), 'Int32'), ((2, 3), 'Float32'), ((2, 3), 'Int32')]
"""

from __future__ import annotations

import json
from typing import Any, NamedTuple

import mindspore as ms
import networkx as nx
import numpy as np
from mindspore import Tensor, ops

from graphaudit import graph as g

__all__ = ["TracedLoss", "loss_attempts", "loss_inside"]


class TracedLoss(NamedTuple):
    """The loss graph (``None`` when no attempt ran) and, if so, why the last attempt failed."""

    graph: nx.MultiDiGraph | None
    failure: str | None


def _stand_in_labels(logits: Tensor) -> list[Tensor]:
    labels = [ops.zeros_like(logits)]
    if logits.ndim >= 1:
        labels.append(ops.zeros((logits.shape[0],), ms.int32))
    return labels


def _stand_in_logits(logits: Tensor) -> Tensor | None:
    if not str(logits.dtype).lower().startswith(("float", "bfloat")):
        return None
    return Tensor(np.full(tuple(logits.shape), 0.5, np.float32))


def loss_attempts(logits: Tensor, label: Any) -> list[tuple[Tensor, Any]]:
    """The ``(first argument, label)`` pairs to try tracing a loss on, in order."""
    labels = [label] if label is not None else _stand_in_labels(logits)
    pairs = [(logits, candidate) for candidate in labels]
    stand_in = _stand_in_logits(logits)
    if stand_in is not None:
        real = [label] if label is not None else []
        pairs += [(stand_in, candidate) for candidate in [*real, *_stand_in_labels(stand_in)]]
    return pairs


def loss_inside(graph: nx.MultiDiGraph, loss_cell: str) -> tuple[nx.MultiDiGraph, tuple[str, ...]] | None:
    """The body of the first call of *loss_cell* in a traced *graph*, as a graph of its own.

    For a loss that a network-with-loss calls itself (traced with the loss expanded, so its
    call records which tensor is which argument): returns the loss's graph, whose
    ``input:i`` nodes are the tensors of its positional arguments (attribute ``argument``:
    the position) wired to the operations that consume them, and, for each tensor of the
    first argument, the node of *graph* that produced it. ``None`` when the loss was not
    called, or its call did not record its arguments.
    """
    calls = g.calls_of(graph, loss_cell)
    if not calls or "args" not in graph.nodes[calls[0]]:
        return None
    call = calls[0]
    inside = {call}
    frontier = [call]
    while frontier:
        for _, target, d in graph.out_edges(frontier.pop(), data=True):
            if d["kind"] == g.ENCLOSES and target not in inside:
                inside.add(target)
                frontier.append(target)
    body = nx.MultiDiGraph(**graph.graph)
    body.graph["traced"] = True
    for node in inside:
        body.add_node(node, **graph.nodes[node])
    for source, target, d in graph.edges(data=True):
        if source in inside and target in inside:
            body.add_edge(source, target, **d)
    sources = json.loads(graph.nodes[call]["args"])
    logits: list[str] = []
    for index, (argument, producer, slot) in enumerate(sources):
        node = g.input_node(index)
        body.add_node(node, kind=g.INPUT, index=index, argument=argument, shape="[]", dtype="")
        if argument == 0:
            logits.append(producer)
        for _, target, d in graph.out_edges(producer, data=True) if producer else ():
            if d["kind"] == g.FLOWS and target in inside and d["src_slot"] == slot:
                body.add_edge(node, target, **d)
                body.nodes[node].update(shape=d.get("shape", "[]"), dtype=d.get("dtype", ""))
    return body, tuple(logits)

"""The loss, as the training step calls it: what to try it on, and how to find it inside a network.

The loss-pairing checks (GA4xx) need to see what a loss does with its first input. A
MindSpore loss class is known by its class; a user-written one has to be traced. Given
separately, it is traced after the network's forward pass (:func:`graphaudit.capture.capture`
with ``loss=``), on stand-in logits of 0.5 shaped and typed like the network's output (its
first tensor) and the real label; the real output only when the stand-in is refused, so that
values a loss rejects (``ops.binary_cross_entropy`` on logits outside [0, 1]: exactly the bug
GA402 looks for) never reach a CPU kernel that would fail on them asynchronously. Without a
usable label, stand-ins are tried (zeros shaped like the output, then class indices; see
:func:`loss_attempts`). Called by a network-with-loss, it is traced where it is called, and
:func:`loss_inside` cuts its body out of the network's graph.

A loss that takes more than ``(logits, label)`` — a detector's ``construct(feats, targets,
imgs)``, called by its train step as ``loss_fn(network(x), label, x)`` — is called as the
step calls it: on the network's whole output (a tuple of head outputs), with a label tuple
spread over the loss's further parameters (``label=(targets, imgs)``); :func:`loss_calls`
lists those calls, then the first-tensor attempts above, and :func:`spread_label` is the rule.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor
    >>> [(tuple(x.shape), str(y.dtype)) for x, y in loss_attempts(Tensor(np.zeros((2, 3), np.float32)), None)]
    [((2, 3), 'Float32'), ((2, 3), 'Int32'), ((2, 3), 'Float32'), ((2, 3), 'Int32')]
"""

from __future__ import annotations

import inspect
import json
from typing import Any, NamedTuple

import mindspore as ms
import networkx as nx
import numpy as np
from mindspore import Tensor, ops

from graphaudit import graph as g
from graphaudit.capture.network.recorder import flatten_tensors

__all__ = [
    "TracedLoss",
    "label_fits",
    "loss_attempts",
    "loss_calls",
    "loss_inside",
    "spread_label",
    "unheld_label",
]


class TracedLoss(NamedTuple):
    """The loss graph (``None`` when no attempt ran) and, if so, why the last attempt failed.

    ``first_tensors``: how many tensors the loss's first argument held (its ``input:0`` ...
    ``input:{n-1}``: the network's ``output:0`` ... ``output:{n-1}``).
    """

    graph: nx.MultiDiGraph | None
    failure: str | None
    first_tensors: int = 1
    #: Why the loss could not run on the label the user gave (MindSpore's own words), when
    #: every call with it raised: nothing the loss would do in training was seen.
    refused: str | None = None


def _stand_in_labels(logits: Tensor) -> list[Tensor]:
    labels = [ops.zeros_like(logits)]
    if logits.ndim >= 1:
        labels.append(ops.zeros((logits.shape[0],), ms.int32))
    return labels


def _stand_in_logits(logits: Tensor) -> Tensor | None:
    if not str(logits.dtype).lower().startswith(("float", "bfloat")):
        return None
    return Tensor(np.full(tuple(logits.shape), 0.5, np.float32)).astype(logits.dtype)


def label_fits(output: Any, label: Any) -> bool:
    """Whether integer *label* values are class indices *output* can hold: in ``[0, classes)``.

    MindSpore's CPU kernels of the class-index losses (``nll_loss``, cross-entropy) do not
    check their labels: an index beyond the output's classes is read out of bounds and may
    crash the process. So graphaudit never runs a loss on such a label (GA052 and GA006
    report it); any label that is not an integer tensor fits. The classes are the output's
    widest non-batch axis, so ``(N, C)``, ``(N, C, H, W)`` and ``(N, T, V)`` outputs are all
    covered.

    Example:
        >>> import numpy as np
        >>> from mindspore import Tensor
        >>> out = Tensor(np.zeros((4, 1), np.float32))
        >>> label_fits(out, Tensor(np.array([0, 1, 0, 1], np.int32))), label_fits(out, Tensor(np.zeros(4, np.int32)))
        (False, True)
    """
    if not isinstance(label, Tensor) or not isinstance(output, Tensor) or output.ndim < 2:
        return True
    if not str(label.dtype).lower().startswith(("int", "uint")) or label.size == 0:
        return True
    values = label.asnumpy()
    return bool(values.min() >= 0 and values.max() < _classes(output))


def _classes(output: Tensor) -> int:
    return max(int(d) for d in output.shape[1:])


def unheld_label(output: Any, label: Any) -> str | None:
    """Why no loss may run on *label* next to the network's *output*, or ``None`` when one may.

    Every tensor of a tuple *label* is judged against the output's first tensor
    (:func:`label_fits`): a class index beyond the output's classes is read out of bounds by
    MindSpore's CPU kernels, which may crash the process.

    Example:
        >>> import numpy as np
        >>> from mindspore import Tensor
        >>> unheld_label(Tensor(np.zeros((2, 3), np.float32)), Tensor(np.array([0, 7], np.int32)))
        'the label holds class indices outside [0, 3) that the output cannot hold'
    """
    outputs = flatten_tensors(output)
    parts = label if isinstance(label, tuple) else (label,)
    if not outputs or all(label_fits(outputs[0], part) for part in parts):
        return None
    return f"the label holds class indices outside [0, {_classes(outputs[0])}) that the output cannot hold"


def loss_attempts(logits: Tensor, label: Any) -> list[tuple[Tensor, Any]]:
    """The ``(first argument, label)`` pairs to try tracing a loss on, in order.

    Stand-in logits of 0.5, shaped and typed like *logits*, come first: the loss's graph does
    not depend on the values, and real values a loss rejects (``ops.binary_cross_entropy`` on
    logits outside [0, 1]) fail asynchronously in a CPU kernel, which can abort the process
    instead of raising. The real *logits* follow, for a loss that cannot take the stand-in.
    A real *label* comes before stand-in labels, unless it holds class indices *logits*
    cannot hold (:func:`label_fits`).
    """
    if label is not None and not label_fits(logits, label):
        label = None
    labels = [label] if label is not None else _stand_in_labels(logits)
    stand_in = _stand_in_logits(logits)
    firsts = [stand_in, logits] if stand_in is not None else [logits]
    return [(first, candidate) for first in firsts for candidate in labels]


def _binds(loss_fn: Any, args: tuple[Any, ...]) -> bool | None:
    try:
        inspect.signature(loss_fn.construct).bind(*args)
    except TypeError:
        return False
    except (AttributeError, ValueError):  # no Python signature to read
        return None
    return True


def spread_label(loss_fn: Any, first: Any, label: Any) -> tuple[Any, ...]:
    """The arguments after *first*: ``(label,)``, or the items of a tuple *label* the loss takes apart.

    A tuple label is spread when the loss's ``construct`` takes ``(first, *label)`` and not
    ``(first, label)``: ``YOLOv8Loss.construct(feats, targets, imgs)`` with ``label=(targets, imgs)``.

    Example:
        >>> from mindspore import nn
        >>> class DetectionLoss(nn.Cell):
        ...     def construct(self, feats, targets, imgs):
        ...         return feats
        >>> spread_label(DetectionLoss(), "out", ("targets", "imgs")), spread_label(nn.MSELoss(), "out", "y")
        (('targets', 'imgs'), ('y',))
    """
    spread = isinstance(label, tuple) and label and _binds(loss_fn, (first, label)) is False
    return label if spread and _binds(loss_fn, (first, *label)) else (label,)


def loss_calls(loss_fn: Any, output: Any, label: Any) -> list[tuple[tuple[Any, ...], int]]:
    """The argument tuples to trace *loss_fn* on, in order, each with the tensor count of its first argument.

    First, with a real *label* and an output of several tensors, the call the training step
    makes: ``loss_fn(output, *spread_label(...))``. Then :func:`loss_attempts` on the first
    tensor of the output, the label spread the same way.
    """
    outputs = flatten_tensors(output)
    if not outputs:
        return []
    calls: list[tuple[tuple[Any, ...], int]] = []
    fits = unheld_label(output, label) is None
    if label is not None and fits and isinstance(output, (tuple, list)) and len(outputs) > 1:
        calls.append(((output, *spread_label(loss_fn, output, label)), len(outputs)))
    for first, candidate in loss_attempts(outputs[0], label):
        calls.append(((first, *spread_label(loss_fn, first, candidate)), 1))
    return calls


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

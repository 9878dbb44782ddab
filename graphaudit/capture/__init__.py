"""Capture: everything that runs MindSpore, and the one way into it for a network.

The first stage of graphaudit's pipeline (capture → evidence → checks → report/draw).
:func:`capture` (:mod:`~graphaudit.capture.network.session`) walks a network's cells and parameters
and, with ``inputs``, traces one PyNative forward pass — and the loss on its output — leaving
the network exactly as it was; :func:`to_networkx` is its public face. See
:mod:`graphaudit.graph` for the vocabulary of the graph and ``docs/capture.md`` for how the
forward pass is traced and why.

The subpackages run the rest of what an audit needs from MindSpore: training steps
and what a training setup holds (:mod:`~graphaudit.capture.training`), data pipelines
(:mod:`~graphaudit.capture.data`), what is compiled (:mod:`~graphaudit.capture.compilation`),
the dependency probe (:mod:`~graphaudit.capture.dependency`) and what a checkpoint would load
(:mod:`~graphaudit.capture.checkpoint`). The weights across ranks are
:mod:`graphaudit.distributed`'s.
"""

from __future__ import annotations

from typing import Any

import networkx as nx
from mindspore import nn

from graphaudit.capture.network.inputs import check_cell
from graphaudit.capture.network.session import Captured, capture
from graphaudit.capture.network.shutdown import guard_cell_teardown
from graphaudit.errors.arguments import checked_call

__all__ = ["Captured", "capture", "check_cell", "to_networkx"]

guard_cell_teardown()


@checked_call
def to_networkx(net: nn.Cell, inputs: Any = None) -> nx.MultiDiGraph:
    """Capture *net*'s cells and parameters, and with *inputs* a real forward pass, as a graph.

    *net* may also be a ``mindspore.dataset`` pipeline (a ``mindspore.dataset.Dataset``):
    its graph is then the pipeline's, read without iterating it, with the vocabulary of
    :mod:`graphaudit.graph.pipeline` (``source`` / ``operation`` / ``transform`` nodes,
    ``feeds`` / ``applies`` edges), named ``"dataset"``; *inputs* must be ``None``.

    Without ``inputs`` the graph holds the network's structure: ``cell`` and ``parameter``
    nodes with ``contains`` and ``owns`` edges, one node per *object*, so a shared cell or
    a tied parameter is one node with several incoming edges. With ``inputs`` (a Tensor,
    or a tuple passed positionally to ``construct``) one PyNative forward pass is traced
    and ``call``, ``op``, ``input`` and ``output`` nodes with ``invokes``, ``encloses``,
    ``flows`` and ``reads`` edges are added. See :mod:`graphaudit.graph` for every kind.

    The network is left exactly as it was: parameter values, ``requires_grad``, training
    flags, the global context and the random state are restored after the pass.

    Raises:
        NotACellError: *net* is not a ``mindspore.nn.Cell``.
        InputError: *inputs* cannot be passed to ``construct``.
        ForwardError: ``construct`` raised; the message names the cell where it happened.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)])
        >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 4), np.float32)))
        >>> [n for n, d in g.nodes(data=True) if d["kind"] == "call"]
        ['call:#1', 'call:0#1', 'call:1#1', 'call:2#1']
        >>> sorted(g.successors("call:0#1"))
        ['call:1#1', 'cell:0']
    """
    from graphaudit.capture.data.pipeline import is_dataset

    if is_dataset(net):
        from graphaudit.capture.data.pipeline import pipeline_graph
        from graphaudit.errors import InputError

        if inputs is not None:
            raise InputError(
                "to_networkx(dataset) reads the pipeline itself: it takes no inputs=. Pass the dataset alone."
            )
        return pipeline_graph(net)
    return capture(net, inputs).graph

"""Capture: everything that runs MindSpore, and the one way into it for a network.

The first stage of graphaudit's pipeline (capture → evidence → checks → report/draw).
:func:`capture` walks a network's cells and parameters and, with ``inputs``, traces one
PyNative forward pass, leaving the network exactly as it was; :func:`to_networkx` is its
public face. See :mod:`graphaudit.graph` for the vocabulary of the graph and
``docs/capture.md`` for how the forward pass is traced and why.

The other modules run the rest of what an audit needs from MindSpore: the loss
(:mod:`~graphaudit.capture.loss`), one real training step (:mod:`~graphaudit.capture.step`),
weight fingerprints across ranks (:mod:`~graphaudit.capture.fingerprint`), and finding the
network inside a training wrapper (:mod:`~graphaudit.capture.unwrap`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import mindspore as ms
import networkx as nx
from mindspore import nn

from graphaudit.capture.inputs import check_cell, describe_inputs, normalize_inputs
from graphaudit.capture.isolation import preserved, synchronize
from graphaudit.capture.shutdown import guard_cell_teardown
from graphaudit.capture.structure import Structure, add_structure
from graphaudit.capture.trace import Tracer, trace_forward
from graphaudit.errors import ForwardError, GraphAuditError, excerpt
from graphaudit.version import __version__

__all__ = ["Captured", "capture", "to_networkx"]

guard_cell_teardown()


class Captured(NamedTuple):
    """What :func:`capture` returns: the graph, the objects behind its nodes, the output."""

    graph: nx.MultiDiGraph
    structure: Structure
    output: Any


def _forward_error(
    net: nn.Cell, args: tuple[Any, ...], tracer: Tracer | None, err: Exception
) -> ForwardError:
    where = tracer.failed_path if tracer is not None else None
    place = f"in {type(net).__name__}.construct" if not where else f"in the cell at '{where}'"
    return ForwardError(
        f"the forward pass of {type(net).__name__} raised {type(err).__name__} {place} while "
        f"graphaudit ran net(*inputs) with inputs ({describe_inputs(args)}):\n{excerpt(err)}\n"
        "Check that `inputs` match what the network expects (the shape and dtype of one batch "
        "from your dataset, one value per construct() parameter) and that net(*inputs) runs on "
        "its own. The original error is chained as __cause__."
    )


def _written_by_optimizers(cells: list[nn.Cell]) -> list[Any]:
    """Everything an optimizer inside the network can write: the parameters it updates, its state.

    A network that holds an optimizer (a zoo's own train-step cell) runs a real training
    step when its construct is traced; the optimizer's construct is compiled (``@jit``), so
    its writes cannot be seen operation by operation and are saved up front instead.
    """
    from graphaudit.capture.optimizer import optimizer_state_parameters, unique

    optimizers = [cell for cell in cells if isinstance(cell, nn.Optimizer)]
    return unique(p for optimizer in optimizers for p in optimizer_state_parameters(optimizer))


def capture(net: nn.Cell, inputs: Any = None, *, expand: tuple[nn.Cell, ...] = ()) -> Captured:
    """:func:`to_networkx`, also returning the object maps and the network's output.

    *inputs* are checked (:func:`~graphaudit.capture.inputs.normalize_inputs`) unless they
    already are a tuple of normalised values. Cells in *expand* have the operations in their
    body traced even when they have no sub-cells (the loss capture uses this to see inside
    loss functions).
    """
    net = check_cell(net)
    graph = nx.MultiDiGraph(
        name=type(net).__name__,
        graphaudit_version=__version__,
        mindspore_version=ms.__version__,
        traced=inputs is not None,
    )
    structure = add_structure(graph, net)
    if inputs is None:
        return Captured(graph, structure, None)
    args = normalize_inputs(net, inputs)
    cells = list(structure.cells.values())
    params = list(structure.parameters.values())
    tracer: Tracer | None = None
    try:
        with preserved(cells, params) as snapshot:
            for param in _written_by_optimizers(cells):
                snapshot.save_parameter(param)
            tracer = Tracer(
                graph,
                structure,
                on_parameter_write=snapshot.save_parameter,
                expand=frozenset(id(cell) for cell in expand),
            )
            if ms.get_context("mode") != ms.PYNATIVE_MODE:
                ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
            output = trace_forward(tracer, net, args)
            synchronize()
    except GraphAuditError:
        raise
    except Exception as err:
        # Also what surfaces only when preserved() synchronises on exit: a kernel of this
        # pass that failed asynchronously. The state is restored by then.
        raise _forward_error(net, args, tracer, err) from err
    return Captured(graph, structure, output)


def to_networkx(net: nn.Cell, inputs: Any = None) -> nx.MultiDiGraph:
    """Capture *net*'s cells and parameters, and with *inputs* a real forward pass, as a graph.

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
    return capture(net, inputs).graph

"""One isolated, traced session: the network's forward pass and, on its output, the loss.

:func:`capture` walks a network's cells and parameters and, with ``inputs``, traces one
PyNative forward pass; given a loss, it also traces the loss on that pass's output, in the
same session (the wrappers installed once, the state saved and put back once). Everything
the session can change is restored before it returns: see
:mod:`~graphaudit.capture.isolation`.

Example:
    >>> import numpy as np
    >>> from mindspore import nn, Tensor
    >>> x = Tensor(np.ones((2, 3), np.float32))
    >>> captured = capture(nn.Dense(3, 1), (x,), loss=(nn.BCEWithLogitsLoss(), None))
    >>> captured.graph.graph["traced"], captured.loss.failure, "input:0" in captured.loss.graph
    (True, None, True)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

import mindspore as ms
import networkx as nx
from mindspore import nn

from graphaudit.capture.inputs import check_cell, describe_inputs, normalize_inputs
from graphaudit.capture.isolation import preserved, synchronize
from graphaudit.capture.loss import TracedLoss, loss_attempts
from graphaudit.capture.structure import Structure, add_structure
from graphaudit.capture.trace import Run, Tracer, flatten_tensors, tracing
from graphaudit.errors import ForwardError, GraphAuditError, excerpt
from graphaudit.version import __version__

__all__ = ["Captured", "capture"]


class Captured(NamedTuple):
    """What :func:`capture` returns: the graph, the objects behind its nodes, the output, the loss."""

    graph: nx.MultiDiGraph
    structure: Structure
    output: Any
    loss: TracedLoss | None = None


def _new_graph(cell: nn.Cell, traced: bool) -> nx.MultiDiGraph:
    return nx.MultiDiGraph(
        name=type(cell).__name__,
        graphaudit_version=__version__,
        mindspore_version=ms.__version__,
        traced=traced,
    )


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


def _written_by_optimizers(cells: Iterable[nn.Cell]) -> list[Any]:
    """Everything an optimizer inside the network can write: the parameters it updates, its state.

    A network that holds an optimizer (a zoo's own train-step cell) runs a real training
    step when its construct is traced; the optimizer's construct is compiled (``@jit``), so
    its writes cannot be seen operation by operation and are saved up front instead.
    """
    from graphaudit.capture.optimizer import optimizer_state_parameters, unique

    optimizers = [cell for cell in cells if isinstance(cell, nn.Optimizer)]
    return unique(p for optimizer in optimizers for p in optimizer_state_parameters(optimizer))


def capture(
    net: nn.Cell,
    inputs: Any = None,
    *,
    expand: tuple[nn.Cell, ...] = (),
    loss: tuple[nn.Cell, Any] | None = None,
) -> Captured:
    """:func:`~graphaudit.capture.to_networkx`, also returning the object maps, the output, the loss.

    *inputs* are checked (:func:`~graphaudit.capture.inputs.normalize_inputs`). Cells in
    *expand* have the operations in their body traced even when they have no sub-cells (a
    loss inside a network-with-loss). With *loss* ``(loss_fn, label)`` and *inputs*, the
    loss is traced too, in the same session, on the first tensor of the network's output
    (``label`` ``None``: stand-ins are tried, see :func:`~graphaudit.capture.loss.loss_attempts`);
    a loss that cannot be traced does not fail the capture: :attr:`Captured.loss` says why.
    """
    net = check_cell(net)
    graph = _new_graph(net, traced=inputs is not None)
    structure = add_structure(graph, net)
    if inputs is None:
        return Captured(graph, structure, None)
    args = normalize_inputs(net, inputs)
    loss_fn = loss[0] if loss is not None else None
    cells = list(structure.cells.values())
    extra_cells = [c for _, c in loss_fn.cells_and_names()] if loss_fn is not None else []
    params = [*structure.parameters.values(), *(loss_fn.get_parameters() if loss_fn is not None else ())]
    tracer: Tracer | None = None
    traced_loss = None
    try:
        with preserved([*cells, *extra_cells], params) as snapshot:
            for param in _written_by_optimizers(cells):
                snapshot.save_parameter(param)
            tracer = Tracer(graph, structure, snapshot.save_parameter, frozenset(id(c) for c in expand))
            if ms.get_context("mode") != ms.PYNATIVE_MODE:
                ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
            with tracing([*cells, *extra_cells]) as run:
                output = run(tracer, net, args)
                synchronize()
                if loss is not None:
                    traced_loss = _trace_loss(run, loss[0], output, loss[1], snapshot.save_parameter)
    except GraphAuditError:
        raise
    except Exception as err:
        # Also what surfaces only when preserved() synchronises on exit: a kernel of this
        # pass that failed asynchronously. The state is restored by then.
        raise _forward_error(net, args, tracer, err) from err
    return Captured(graph, structure, output, traced_loss)


def _trace_loss(run: Run, loss_fn: nn.Cell, output: Any, label: Any, on_write: Any) -> TracedLoss:
    """``loss_fn(output, label)`` traced with its body expanded, in the session *run* belongs to."""
    outputs = list(flatten_tensors(output))
    if not outputs:
        return TracedLoss(None, "the network's output holds no tensor to give the loss")
    failure = None
    for first, candidate in loss_attempts(outputs[0], label):
        graph = _new_graph(loss_fn, traced=True)
        tracer = Tracer(graph, add_structure(graph, loss_fn), on_write, frozenset({id(loss_fn)}))
        try:
            run(tracer, loss_fn, (first, candidate))
            synchronize()  # a kernel that fails asynchronously fails this attempt, not a later one
        except Exception as err:
            failure = f"{type(err).__name__}: {str(err).strip().splitlines()[0] if str(err).strip() else ''}"
            continue
        return TracedLoss(graph, None)
    return TracedLoss(None, failure)

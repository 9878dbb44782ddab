"""One isolated, traced pass of a network and, on its output, the loss.

:func:`capture` walks a network's cells and parameters and, with ``inputs``, traces one
PyNative forward pass; given a loss, it also traces the loss on that pass's output
(:func:`trace_loss`). Everything a pass can change is restored before it returns: see
:mod:`~graphaudit.capture.network.isolation`.

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

from graphaudit.capture.compilation.jit import jit_disabled
from graphaudit.capture.network.inputs import check_cell, describe_inputs, normalize_inputs
from graphaudit.capture.network.isolation import preserved, synchronize
from graphaudit.capture.network.recorder import Tracer
from graphaudit.capture.network.structure import Structure, add_structure
from graphaudit.capture.network.wrappers import EXCLUSIVE, installed, tracing
from graphaudit.capture.training.loss import TracedLoss, _binds, loss_calls, unheld_label
from graphaudit.capture.training.step_harness import graphs_not_saved
from graphaudit.errors import ForwardError, GraphAuditError, InputError, excerpt
from graphaudit.version import __version__

__all__ = ["Captured", "capture", "trace_loss"]


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
    from graphaudit.capture.training.optimizer import optimizer_state_parameters, unique

    optimizers = [cell for cell in cells if isinstance(cell, nn.Optimizer)]
    return unique(p for optimizer in optimizers for p in optimizer_state_parameters(optimizer))


def _refuse_uninitialized(net: nn.Cell, params: list[Any]) -> None:
    """Refuse a forward pass that would initialise the network's lazily initialised parameters.

    MindSpore makes their values on a cell's first call (``no_init_parameters()``, lazy
    ``init=``): run by the audit, that would change the network it audits (once, here, the
    values made inside the audit's pass were not those the user's own initialisation makes).
    """
    from graphaudit.capture.network.values import uninitialized

    lazy = uninitialized(((p.name, p) for p in params), type(net).__name__)
    if lazy:
        raise InputError(
            f"{lazy} are not initialised yet (built "
            "under mindspore.nn.utils.no_init_parameters(), or with lazy init): a forward pass would "
            "initialise them, changing the network. Initialise them first (net.init_parameters_data(), "
            "or load the checkpoint with mindspore.load_param_into_net), or audit without inputs= "
            "(the structure only)."
        )


def capture(
    net: nn.Cell,
    inputs: Any = None,
    *,
    expand: tuple[nn.Cell, ...] = (),
    loss: tuple[nn.Cell, Any] | None = None,
) -> Captured:
    """:func:`~graphaudit.capture.to_networkx`, also returning the object maps, the output, the loss.

    *inputs* are checked (:func:`~graphaudit.capture.network.inputs.normalize_inputs`). Cells in
    *expand* have the operations in their body traced even when they have no sub-cells (a
    loss inside a network-with-loss). With *loss* ``(loss_fn, label)`` and *inputs*, the
    loss is traced too, on the network's output (:func:`trace_loss`); a loss that cannot
    be traced does not fail the capture: :attr:`Captured.loss` says why.
    """
    net = check_cell(net)
    graph = _new_graph(net, traced=inputs is not None)
    structure = add_structure(graph, net)
    if inputs is None:
        return Captured(graph, structure, None)
    args = normalize_inputs(net, inputs)
    cells = list(structure.cells.values())
    params = list(structure.parameters.values())
    _refuse_uninitialized(net, params)
    # One install of the wrappers for the pass and the loss's captures after it (installed()).
    loss_cells = (
        [c for _, c in loss[0].cells_and_names()] if loss is not None and isinstance(loss[0], nn.Cell) else []
    )
    with installed([*cells, *loss_cells]):
        output = _traced_pass(net, args, graph, structure, expand)
        traced_loss = trace_loss(loss[0], output, loss[1]) if loss is not None else None
    return Captured(graph, structure, output, traced_loss)


def _traced_pass(
    net: nn.Cell,
    args: tuple[Any, ...],
    graph: nx.MultiDiGraph,
    structure: Structure,
    expand: tuple[nn.Cell, ...],
) -> Any:
    """``net(*args)`` traced into *graph*, everything it changes put back; its output."""
    cells = list(structure.cells.values())
    params = list(structure.parameters.values())
    tracer: Tracer | None = None
    try:
        with EXCLUSIVE, graphs_not_saved(), preserved(cells, params) as snapshot:
            snapshot.save_now(_written_by_optimizers(cells))
            tracer = Tracer(
                graph, structure, snapshot.save_parameter, frozenset(id(c) for c in expand), snapshot.stand_in
            )
            if ms.get_context("mode") != ms.PYNATIVE_MODE:
                ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
            # What the user compiles with mindspore.jit runs as the Python it is, to be seen.
            with jit_disabled(), tracing(cells) as run:
                output = run(tracer, net, args)
            # Outside the session: an error a kernel raises asynchronously (CPU kernels check
            # their inputs late) surfaces here, with nothing of graphaudit's on the stack.
            synchronize()
    except GraphAuditError:
        raise
    except Exception as err:
        # Also what surfaces only when preserved() synchronises on exit: a kernel of this
        # pass that failed asynchronously. The state is restored by then.
        raise _forward_error(net, args, tracer, err) from err
    return output


def trace_loss(loss_fn: nn.Cell, output: Any, label: Any) -> TracedLoss:
    """The loss traced on the network's *output*, its body expanded: one capture per attempt.

    Tried on the calls of :func:`~graphaudit.capture.training.loss.loss_calls`, in order: the call the
    training step makes (the whole output, a tuple label spread over the loss's further
    arguments), then the output's first tensor with stand-in labels. Each attempt is a
    capture of its own, so that a kernel failing in one (a loss given values it rejects)
    is restored from and cannot reach the next.
    """
    calls = loss_calls(loss_fn, output, label)
    if not calls:
        return TracedLoss(None, "the network's output holds no tensor to give the loss")
    failure = refused = None
    real_label = label is not None and unheld_label(output, label) is None
    for arguments, first_tensors in calls:
        try:
            graph = capture(loss_fn, arguments, expand=(loss_fn,)).graph
        except GraphAuditError as err:
            failure = str(err).splitlines()[0]
            if _binds(loss_fn, arguments) is not False:  # not a call of the wrong arity: the label's fault
                refused = refused or _kernel_message(err)
            continue
        return TracedLoss(graph, None, first_tensors)
    # Every call had the user's label (stand-ins are tried only without one): the loss refuses it.
    return TracedLoss(None, failure, refused=refused if real_label else None)


def _kernel_message(err: Exception) -> str:
    """The first line of what MindSpore said, without graphaudit's wording around it."""
    cause = err.__cause__ or err
    lines = [line.strip() for line in str(cause).splitlines() if line.strip() and not line.startswith("-")]
    return f"{type(cause).__name__}: {lines[0] if lines else ''}"

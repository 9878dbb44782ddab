"""Find what a training setup trains: the network, its loss and its optimizer, inside the wrappers.

``audit()`` accepts what users train with, and never runs a training step to look at it:

- a ``mindspore.train.Model`` (its network, loss and optimizer);
- a ``nn.TrainOneStepCell`` or a subclass (``TrainOneStepWithLossScaleCell``...), and any
  other cell that holds an optimizer — a zoo's own train-step cell with a loss scaler and
  gradient clipping: the network it trains is the sub-cell holding the optimizer's
  parameters;
- a ``nn.WithLossCell`` (or a cell like it: ``_backbone`` and ``_loss_fn``, as
  ``amp.build_train_network`` makes): the backbone is audited, the loss traced on its
  output, and the inputs end with the label;
- any other network-with-loss (a cell taking ``(images, targets...)`` and returning the loss,
  with a loss cell inside): it is audited as it is, with all its inputs, and the loss cell
  is traced where the network calls it. What a train-step cell trains is such a network by
  definition (the step differentiates what it returns), even when no loss cell is found in
  it (a loss computed by an operation, ``ops.CTCLoss``, or by the model's own code): it is
  audited with all its inputs, and the probe differentiates it as the step does.

The wrappers themselves are not audited: their parameters are the network's and the
optimizer's. What was unwrapped is kept in :attr:`TrainingSetup.unwrapped`, for the report.

Example:
    >>> from mindspore import nn
    >>> backbone = nn.Dense(3, 2)
    >>> setup = unwrap(nn.WithLossCell(backbone, nn.MSELoss()))
    >>> setup.net is backbone, type(setup.loss_fn).__name__, setup.takes_label
    (True, 'MSELoss', True)
"""

from __future__ import annotations

from typing import Any, NamedTuple

from mindspore import nn

from graphaudit.errors import ArgumentError

__all__ = ["TrainingSetup", "is_loss_cell", "unwrap"]


class TrainingSetup(NamedTuple):
    """What was found: the network to audit, its optimizer and loss, and how its inputs are laid out.

    ``takes_label``: the wrapper's inputs end with the loss's label (the backbone takes the
    others). ``loss_inside``: ``net`` returns the loss itself (a network-with-loss, or what a
    train-step cell differentiates); ``loss_fn``, when one was found, is the loss cell it
    calls, traced there. ``unwrapped``: what was taken off, outermost first.
    """

    net: Any
    optimizer: Any
    loss_fn: Any
    takes_label: bool
    loss_inside: bool = False
    unwrapped: tuple[str, ...] = ()


def _is_model(obj: Any) -> bool:
    return type(obj).__name__ == "Model" and hasattr(obj, "_network")


def is_loss_cell(cell: Any) -> bool:
    """A loss: a ``nn.LossBase``, or a cell whose class is named like one (``YOLOv8Loss``, ``DBLoss``)."""
    if not isinstance(cell, nn.Cell) or isinstance(cell, nn.Optimizer):
        return False
    name = type(cell).__name__
    return isinstance(cell, nn.LossBase) or name.endswith("Loss") or name.endswith("LossCell")


def _with_loss_parts(cell: Any) -> tuple[Any, Any] | None:
    """``(backbone, loss)`` of a ``nn.WithLossCell`` or a cell built like one."""
    if isinstance(cell, nn.WithLossCell):
        return cell._backbone, cell._loss_fn
    backbone, loss = (
        vars(cell).get("_cells", {}).get("_backbone"),
        vars(cell).get("_cells", {}).get("_loss_fn"),
    )
    if isinstance(backbone, nn.Cell) and is_loss_cell(loss):
        return backbone, loss
    return None


def _children(cell: Any) -> list[Any]:
    return [c for c in cell._cells.values() if c is not None]


def _trained_by(cell: Any) -> tuple[Any, Any] | None:
    """``(optimizer, network)`` when *cell* holds an optimizer: the sub-cell holding its parameters."""
    optimizers = [c for c in _children(cell) if isinstance(c, nn.Optimizer)]
    if not optimizers or isinstance(cell, nn.Optimizer):
        return None
    optimizer = optimizers[0]
    trained = {id(p) for p in optimizer.parameters}
    scored = [
        (sum(id(p) in trained for p in child.get_parameters()), child)
        for child in _children(cell)
        if not isinstance(child, nn.Optimizer)
    ]
    best = max(scored, key=lambda item: item[0], default=(0, None))
    if best[0] == 0:
        raise ArgumentError(
            f"{type(cell).__name__} holds an optimizer ({type(optimizer).__name__}), so calling it runs a "
            "training step, but none of its other cells holds the parameters that optimizer updates: "
            "graphaudit cannot tell which network it trains. Pass the network and the optimizer "
            "themselves: audit(net, optimizer, ...)."
        )
    return optimizer, best[1]


def _strip_output_casts(net: Any, unwrapped: list[str]) -> Any:
    # amp's _OutputTo32 only casts the backbone's output back to float32.
    while type(net).__name__ == "_OutputTo32" and isinstance(vars(net)["_cells"].get("_backbone"), nn.Cell):
        unwrapped.append(type(net).__name__)
        net = net._backbone
    return net


def unwrap(net: Any, optimizer: Any = None, loss_fn: Any = None) -> TrainingSetup:
    """What *net* trains; see the module docstring. An *optimizer* or *loss_fn* given explicitly wins."""
    from graphaudit.capture.compilation.jit import unwrap_jit_cell

    net = unwrap_jit_cell(net)  # jit(cell): the cell's compiled construct
    unwrapped: list[str] = []
    takes_label = False
    if _is_model(net):
        unwrapped.append("Model")
        optimizer = optimizer if optimizer is not None else getattr(net, "_optimizer", None)
        found_loss = getattr(net, "_loss_fn", None)
        loss_fn = loss_fn if loss_fn is not None else found_loss
        takes_label = found_loss is not None
        net = net._network
    stepped = False  # net is what a train-step cell differentiates: it returns the loss
    while isinstance(net, nn.Cell):
        found = (net.optimizer, net.network) if isinstance(net, nn.TrainOneStepCell) else _trained_by(net)
        if found is None:
            break
        unwrapped.append(type(net).__name__)
        optimizer = optimizer if optimizer is not None else found[0]
        net = found[1]
        stepped = True
    parts = _with_loss_parts(net) if isinstance(net, nn.Cell) else None
    if parts is not None:
        unwrapped.append(type(net).__name__)
        net, found_loss = parts
        loss_fn = loss_fn if loss_fn is not None else found_loss
        return TrainingSetup(
            _strip_output_casts(net, unwrapped), optimizer, loss_fn, True, False, tuple(unwrapped)
        )
    if loss_fn is None and isinstance(net, nn.Cell):
        losses = [c for name, c in net.cells_and_names() if name and is_loss_cell(c)]
        if losses:  # a network-with-loss: audited whole, with all its inputs
            return TrainingSetup(net, optimizer, losses[0], False, True, tuple(unwrapped))
        if stepped:  # the step differentiates it: it computes its loss, with no loss cell to trace
            return TrainingSetup(net, optimizer, None, False, True, tuple(unwrapped))
    if takes_label and isinstance(net, nn.Cell):
        net = _strip_output_casts(net, unwrapped)
    return TrainingSetup(net, optimizer, loss_fn, takes_label, False, tuple(unwrapped))

"""Find the network, its loss and its optimizer inside the wrappers that train it.

``audit()`` accepts what users train: a ``nn.WithLossCell``, a ``nn.TrainOneStepCell`` (or a
subclass), a ``mindspore.train.Model``. The checks look at the *backbone* inside; the loss
and the optimizer found on the way are audited with it, and the inputs of such a wrapper
end with the label.

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

__all__ = ["TrainingSetup", "unwrap"]


class TrainingSetup(NamedTuple):
    """The backbone, optimizer and loss found; ``takes_label``: the wrapper's inputs end with the label."""

    net: Any
    optimizer: Any
    loss_fn: Any
    takes_label: bool


def _is_model(obj: Any) -> bool:
    return type(obj).__name__ == "Model" and hasattr(obj, "_network")


def unwrap(net: Any, optimizer: Any = None, loss_fn: Any = None) -> TrainingSetup:
    """The backbone, optimizer and loss inside a ``Model`` / ``TrainOneStepCell`` / ``WithLossCell``.

    An *optimizer* or *loss_fn* given explicitly wins over the one found inside.
    """
    takes_label = False
    if _is_model(net):
        optimizer = optimizer if optimizer is not None else getattr(net, "_optimizer", None)
        loss_fn = loss_fn if loss_fn is not None else getattr(net, "_loss_fn", None)
        net = net._network
        takes_label = loss_fn is not None
    if isinstance(net, nn.TrainOneStepCell):
        optimizer = optimizer if optimizer is not None else net.optimizer
        net = net.network
        takes_label = True
    if isinstance(net, nn.WithLossCell):
        loss_fn = loss_fn if loss_fn is not None else net._loss_fn
        net = net._backbone
        takes_label = True
    return TrainingSetup(net, optimizer, loss_fn, takes_label)

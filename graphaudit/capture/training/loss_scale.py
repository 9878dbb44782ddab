"""How a training setup scales its gradients: the train-step cell, its loss scale, the optimizer's.

Loss scaling multiplies the loss (and so every gradient) by a factor before the backward pass,
so that float16 gradients do not underflow, and must divide the gradients by the same factor
exactly once before the update. In MindSpore three objects take part, and they must agree:

- ``nn.TrainOneStepCell(network, optimizer, sens=S)`` multiplies the gradients by ``S`` and
  does **not** divide them back (``mindspore.train.Model`` builds it so for
  ``FixedLossScaleManager(S, drop_overflow_update=False)``);
- ``nn.TrainOneStepWithLossScaleCell(network, optimizer, scale_sense)`` multiplies by its
  ``scale_sense`` and divides back itself; with an update cell
  (``DynamicLossScaleUpdateCell``, what ``DynamicLossScaleManager`` gives) a step whose
  gradients overflow is skipped and the scale changes;
- every ``nn.Optimizer`` divides the gradients by its own ``loss_scale`` (default 1).

:func:`gradient_scaling` reads them without running anything; the probe
(:mod:`graphaudit.capture.training.probe_steps`) uses :attr:`GradientScaling.train_cell` to run the same
scaled steps. Read on MindSpore 2.10 (``mindspore/nn/wrap/loss_scale.py``,
``mindspore/train/amp.py``).

Example:
    >>> from mindspore import nn
    >>> net = nn.Dense(2, 2)
    >>> step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params()), sens=128.0)
    >>> scaling = gradient_scaling(step)
    >>> scaling.sens, scaling.unscales, scaling.optimizer_loss_scale, scaling.effective_factor
    (128.0, False, 1.0, 128.0)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from mindspore import nn

from graphaudit.capture.network.values import scalar

__all__ = ["GradientScaling", "find_train_cell", "gradient_scaling", "scale_value"]


@dataclass(frozen=True)
class GradientScaling:
    """What multiplies and divides the gradients between the loss and the update.

    ``sens``: the factor the loss's gradient is multiplied by (the train cell's ``sens`` or
    the current ``scale_sense``); ``unscales``: the train cell divides the gradients by it
    again (``TrainOneStepWithLossScaleCell``); ``update_cell``: the class of the cell that
    changes the scale on overflow (``None``: fixed); ``manager``: the ``Model``'s
    ``loss_scale_manager`` class and its ``drop_overflow_update``; ``optimizer_loss_scale``:
    the optimizer's own ``loss_scale``, by which it divides every gradient.
    """

    wrapper: str = ""
    sens: float = 1.0
    unscales: bool = False
    update_cell: str | None = None
    manager: str | None = None
    drop_overflow_update: bool | None = None
    manager_scale: float | None = None
    optimizer_loss_scale: float = 1.0
    scale_factor: float | None = None
    scale_window: int | None = None
    train_cell: Any = field(default=None, compare=False, repr=False)

    @property
    def effective_factor(self) -> float:
        """What the optimizer's update is multiplied by, compared with an unscaled gradient."""
        applied = 1.0 if self.unscales else self.sens
        return applied / self.optimizer_loss_scale

    @property
    def dynamic(self) -> bool:
        return self.update_cell is not None and "Dynamic" in self.update_cell

    @property
    def skips_on_overflow(self) -> bool:
        """An overflow skips the update (``TrainOneStepWithLossScaleCell``)."""
        return self.unscales


def scale_value(train_cell: Any) -> float:
    """The loss scale *train_cell* applies at its next step (1 when it has none)."""
    if isinstance(train_cell, nn.TrainOneStepWithLossScaleCell):
        return scalar(train_cell.scale_sense) or 1.0
    if isinstance(train_cell, nn.TrainOneStepCell):
        return scalar(getattr(train_cell, "sens", 1.0)) or 1.0
    return 1.0


def find_train_cell(given: Any) -> nn.TrainOneStepCell | None:
    """The ``nn.TrainOneStepCell`` (or subclass) *given* trains with: itself, or a ``Model``'s train network."""
    if isinstance(given, nn.TrainOneStepCell):
        return given
    if type(given).__name__ == "Model" and hasattr(given, "_network"):
        train = getattr(given, "_train_network", None)
        if isinstance(train, nn.TrainOneStepCell):
            return train
    return None


def gradient_scaling(given: Any, optimizer: Any = None) -> GradientScaling | None:
    """How the training setup *given* scales its gradients; ``None`` when it holds no train-step cell.

    *optimizer* is the one the audit found (the train cell's own when ``None``).
    """
    train = find_train_cell(given)
    if train is None:
        return None
    optimizer = optimizer if optimizer is not None else getattr(train, "optimizer", None)
    manager = getattr(given, "_loss_scale_manager", None) if type(given).__name__ == "Model" else None
    update = getattr(train, "loss_scaling_manager", None)
    factor = window = None
    if update is not None:
        factor = scalar(getattr(update, "scale_factor", None))
        window_value = scalar(getattr(update, "scale_window", None))
        window = int(window_value) if window_value is not None else None
    drop = None
    if manager is not None and hasattr(manager, "get_drop_overflow_update"):
        drop = bool(manager.get_drop_overflow_update())
    return GradientScaling(
        wrapper=type(train).__name__,
        sens=scale_value(train),
        unscales=isinstance(train, nn.TrainOneStepWithLossScaleCell),
        update_cell=type(update).__name__ if update is not None else None,
        manager=type(manager).__name__ if manager is not None else None,
        drop_overflow_update=drop,
        manager_scale=scalar(manager.get_loss_scale()) if manager is not None else None,
        optimizer_loss_scale=scalar(getattr(optimizer, "loss_scale", 1.0)) or 1.0,
        scale_factor=factor,
        scale_window=window,
        train_cell=train,
    )

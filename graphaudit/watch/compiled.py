"""Gradient norms out of a compiled training step (GRAPH_MODE ``Model.train``, a ``@jit`` loop).

In a compiled step the gradients the optimizer applies never reach Python. A second gradient
pass would not be the optimizer's gradient (another batch, another dropout mask) and would cost
a step. So the norms are computed inside the same graph, from the very tensors the optimizer
gets, and leave it as a few scalars:

- ``Model.train`` / ``Model.fit``: on the steps the watch samples, :class:`GradientTap` stands
  where the train network calls its optimizer (``TrainOneStepCell.optimizer``, the loss-scaled
  cell's too), writes the norms into a parameter of its own and calls the optimizer with the
  same gradients; the other steps run the train network's own graph. The weights stay
  bit-identical to an unwatched run. The tap's parameter is kept outside the network's
  parameters (no checkpoint or ``parameters_and_names`` sees it), and the optimizer is put
  back when the training ends.
- a loop compiled with ``@jit``: the step returns ``gradient_norms(grads)`` beside its loss,
  and ``w.step(loss, grad_norms=...)`` reads them.

A norm is the gradient's L2 norm in float32; a second row says whether every value was
finite (GA950 names the first gradient that was not). The gradient noise scale (GA955) needs
the gradients themselves, summed over a window of steps, and stays NOT RUN here.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor
    >>> readings = gradient_norms((Tensor(np.array([3.0, 4.0], np.float32)), Tensor(np.array([np.inf], np.float32))))
    >>> GradientNorms.read(readings)
    GradientNorms(norms=(5.0, inf), finite=(True, False))
"""

from __future__ import annotations

import weakref
from collections.abc import Sequence
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn, ops

from graphaudit.watch.record import GradientNorms

__all__ = ["GradientNorms", "GradientTap", "gradient_norms", "tap_train_network"]


def gradient_norms(gradients: Sequence[Tensor]) -> Tensor:
    """``(2, N)`` float32: row 0 each gradient's L2 norm, row 1 ``1.0`` where all its values are finite.

    Written to run inside a compiled step (``@jit``, GRAPH_MODE) as well as in PyNative.
    """
    # One kernel a gradient (L2Loss: sum(g^2) / 2); a sum that is finite says every value was
    # (a float32 sum overflowing from finite values reads as not finite: no watchpoint judges one).
    norms = ops.sqrt(ops.stack([ops.L2Loss()(g.astype(ms.float32)) for g in gradients]) * 2.0)
    return ops.stack([norms, ops.isfinite(norms).astype(ms.float32)])


class GradientTap(nn.Cell):
    """The optimizer, called with the same gradients after their norms are written where the watch reads them.

    The readings and a call counter live in a plain list, not as attributes: a parameter
    attribute would join the train network's parameters (its checkpoints, its names).
    ``auto_prefix=False``: the optimizer's parameter names stay its own. The tap stands in the
    train network only on the steps the watch samples (:meth:`want`): a flag read inside the
    graph would cost every step a branch (+7% a resnet18 step on the CPU, measured), and the
    step without the tap is the unwatched run's own compiled graph.
    """

    def __init__(self, optimizer: nn.Cell, count: int, created: int) -> None:
        super().__init__(auto_prefix=False)
        self.optimizer = optimizer
        self._store = [
            Parameter(
                Tensor(np.zeros((2, count), np.float32)),
                name="graphaudit_gradient_norms",
                requires_grad=False,
            ),
            Parameter(Tensor(np.zeros((), np.int32)), name="graphaudit_gradient_calls", requires_grad=False),
        ]
        self._placed: Tapped | None = None  # where want() puts the tap in and takes it out
        self._seen = 0
        self.created = created  # the creation time the tapped train network is compiled under (Tapped)

    def construct(self, gradients: Any) -> Any:
        readings, calls = self._store[0], self._store[1]
        # No branch and no side effect before the optimizer: around an optimizer whose construct is
        # compiled apart (AdamWeightDecay's @jit(backend="ms_backend")), a branch that assigned
        # dropped either the optimizer's update (the watched run never trained) or its own writes.
        norms = gradient_norms(gradients)
        updated = self.optimizer(gradients)
        ops.assign(readings, norms)
        ops.assign_add(calls, ops.ones((), ms.int32))
        return updated

    def want(self, wanted: bool) -> None:
        """Whether the next steps run through the tap (their norms computed) or as the unwatched step."""
        if self._placed is not None:
            self._placed.place(wanted)

    def calls(self) -> int:
        """How many steps have called the optimizer through the tap."""
        return int(self._store[1].asnumpy())

    def mark(self) -> None:
        """A sampled step is about to run: what :meth:`read` returns must come from it."""
        self.want(True)
        self._seen = self.calls()

    def read(self) -> GradientNorms | None:
        """The norms of the step since :meth:`mark`, or ``None`` when it did not call the optimizer
        (a loss-scaled step that overflowed skips the update)."""
        if self.calls() != self._seen + 1:
            return None
        return GradientNorms.read(self._store[0])


class Tapped:
    """A train network whose optimizer call goes through a :class:`GradientTap`; :meth:`remove` puts it back.

    MindSpore keys a cell's compiled graph by the cell's creation time and id, not by its
    attributes: the tapped network is given another creation time, so that its step is
    compiled with the tap even when it was compiled before without it, and the original
    time back, so that the steps without it (and an unwatched run) find their own graph
    again (both stay compiled: switching costs no compilation after the first of each).
    """

    def __init__(self, train_network: nn.Cell, tap: GradientTap, created: int) -> None:
        self.train_network, self.tap, self.created = train_network, tap, created
        tap._placed = self
        self.place(True)

    def place(self, tapped: bool) -> None:
        """Put the tap where the train network calls its optimizer (*tapped*), or the optimizer back."""
        cells = self.train_network._cells
        if tapped and cells.get("optimizer") is self.tap.optimizer:
            cells["optimizer"] = self.tap
            object.__setattr__(self.train_network, "_create_time", self.tap.created)
        elif not tapped and cells.get("optimizer") is self.tap:
            cells["optimizer"] = self.tap.optimizer
            object.__setattr__(self.train_network, "_create_time", self.created)

    def remove(self) -> None:
        self.place(False)
        self.tap._placed = None


#: The tap each train network was given: a later watch of the same train network puts the
#: same tap back, and its step runs the graph compiled with it (no second compilation).
_TAPS: weakref.WeakKeyDictionary[Any, GradientTap] = weakref.WeakKeyDictionary()


def tap_train_network(train_network: Any, optimizer: Any) -> Tapped | str:
    """Put a :class:`GradientTap` where *train_network* calls *optimizer*, or say why it cannot.

    Set in the train network's own cell table, not through ``setattr`` (a cell with
    ``auto_prefix`` would rename the optimizer's parameters). The step is compiled with it on its
    next call (:class:`Tapped`).
    """
    cells = getattr(train_network, "_cells", None)
    if optimizer is None or not isinstance(cells, dict) or cells.get("optimizer") is not optimizer:
        return (
            f"the train network ({type(train_network).__name__}) does not call the optimizer as its "
            "'optimizer' cell (TrainOneStepCell's way), so the compiled step's gradients cannot be tapped"
        )
    created = int(train_network.create_time)
    tap = _TAPS.get(train_network)
    if tap is None or tap.optimizer is not optimizer:
        # created + 1: the tapped step's own key among the compiled graphs
        tap = GradientTap(optimizer, len(optimizer.parameters), created + 1)
        _TAPS[train_network] = tap
    return Tapped(train_network, tap, created)

"""The parts of a probe step that are not numbers: what it may run, what it keeps, how it fails.

:func:`check_step_arguments` says what is missing before anything runs; :class:`StepLoss`
is ``nn.WithLossCell`` for any number of data inputs; :func:`restored_in_place` and
:func:`preserved_cell_grad_flags` put back what a step writes (see
:mod:`graphaudit.capture.network.isolation`); :func:`step_error` words a failed step.

Example:
    >>> from mindspore import nn
    >>> net = nn.Dense(2, 2)
    >>> check_step_arguments(net, nn.SGD(net.trainable_params()), nn.MSELoss(), label=0) is net
    True
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

from graphaudit.capture.network.inputs import check_cell, describe_inputs
from graphaudit.capture.network.isolation import restore_values, synchronize, tensor_bytes
from graphaudit.capture.training.loss import spread_label
from graphaudit.capture.training.loss_scale import scale_value
from graphaudit.capture.training.optimizer import unique
from graphaudit.errors import ProbeInputError, ProbeStepError, excerpt

__all__ = [
    "StepLoss",
    "TrainingStep",
    "cells_of",
    "check_step_arguments",
    "closed_grad_graphs",
    "graphs_not_saved",
    "jit_marks_removed",
    "preserved_cell_grad_flags",
    "restored_in_place",
    "step_error",
]


def cells_of(*roots: nn.Cell | None) -> list[nn.Cell]:
    """Every cell under *roots* (``None`` skipped), each once."""
    return unique(cell for root in roots if root is not None for _, cell in root.cells_and_names())


@contextmanager
def preserved_cell_grad_flags(cells: list[nn.Cell]) -> Iterator[None]:
    """Put back the cell-level ``requires_grad`` flag that ``value_and_grad`` sets."""
    saved = [(cell, vars(cell).get("requires_grad")) for cell in cells]
    try:
        yield
    finally:
        for cell, flag in saved:
            if vars(cell).get("requires_grad") != flag and flag is not None:
                cell.requires_grad = flag


@contextmanager
def graphs_not_saved() -> Iterator[None]:
    """Compile without writing IR files: the user's ``save_graphs`` is for their compiles, not the audit's.

    With ``set_context(save_graphs=True)`` every compile writes its IR (hundreds of files for a
    network and its training step) into the user's ``save_graphs_path``; the setting (and the
    ``MS_DEV_SAVE_GRAPHS`` variable that replaces it) is turned off for the audit's compiles
    and put back afterwards.
    """
    saved = ms.get_context("save_graphs")
    variable = os.environ.get("MS_DEV_SAVE_GRAPHS")
    try:
        if saved:
            ms.set_context(save_graphs=0)
        if variable is not None:
            os.environ["MS_DEV_SAVE_GRAPHS"] = "0"
        yield
    finally:
        if variable is not None:
            os.environ["MS_DEV_SAVE_GRAPHS"] = variable
        if saved:
            ms.set_context(save_graphs=saved)


#: What MindSpore's ``jit`` writes on the object whose method it compiles (an optimizer's
#: ``construct``): the next compile writes them again, a cached run reads its own copy.
JIT_MARKS = ("__parse_method__", "_mutable_flags")


@contextmanager
def jit_marks_removed(cells: list[nn.Cell]) -> Iterator[None]:
    """Take off the :data:`JIT_MARKS` a compile during the step added to cells that had none."""
    unmarked = [(cell, [m for m in JIT_MARKS if m not in vars(cell)]) for cell in cells]
    try:
        yield
    finally:
        for cell, marks in unmarked:
            for mark in marks:
                vars(cell).pop(mark, None)


@contextmanager
def closed_grad_graphs() -> Iterator[None]:
    """Leave no differentiated graph open in MindSpore's PyNative grad executor.

    A failing step is contained (:class:`_Contained`), so this is the last resort, for an
    exception that reaches a ``value_and_grad`` from outside the contained call (a
    ``KeyboardInterrupt`` delivered while MindSpore records): left open, the graph would take
    in the user's next training step. ``clear_res()`` closes it, at the price of restarting
    the random generators of the network's Dropout kernels (MindSpore keeps them in its
    kernel cache, out of reach).
    """
    executor = ms.common.api._pynative_executor
    was_open = executor.grad_flag()
    try:
        yield
    finally:
        if executor.grad_flag() and not was_open:
            executor.clear_res()


@contextmanager
def restored_in_place(params: list[Parameter]) -> Iterator[dict[int, np.ndarray]]:
    """Save every value of *params*; write back, in place, those that changed."""
    saved = {id(p): tensor_bytes(p) for p in params}
    try:
        yield saved
    finally:
        try:
            synchronize()  # a failed step's queued kernels must not fail the restore
        except Exception:
            pass
        restore_values((param, saved[id(param)]) for param in params)


class StepLoss(nn.Cell):
    """``loss_fn(net(*data), label)``: ``nn.WithLossCell`` for any number of data inputs.

    With *spread*, the label is a tuple the loss takes apart, ``loss_fn(net(*data), *label)``:
    a detector's ``construct(feats, targets, imgs)`` (see
    :func:`graphaudit.capture.training.loss.spread_label`, which decides it once, here, so that
    ``construct`` stays compilable in graph mode).
    """

    def __init__(self, net: nn.Cell, loss_fn: nn.Cell, *, spread: bool = False) -> None:
        super().__init__(auto_prefix=False)
        self._backbone = net
        self._loss_fn = loss_fn
        self._spread = spread

    def construct(self, *inputs: Any) -> Any:
        if self._spread:
            return self._loss_fn(self._backbone(*inputs[:-1]), *inputs[-1])
        return self._loss_fn(self._backbone(*inputs[:-1]), inputs[-1])


def check_step_arguments(
    net: Any, optimizer: Any, loss_fn: Any, label: Any, *, returns_loss: bool = False
) -> nn.Cell:
    """*net*, when a training step can be run with these; a :class:`ProbeInputError` saying what is missing.

    *returns_loss*: *net* is a network-with-loss (it computes the loss itself from all its
    inputs), so no separate loss or label is needed.
    """
    net = check_cell(net, function="the probe step")
    missing: list[tuple[str, str]] = []  # (Python wording, command-line wording)
    if loss_fn is None and not returns_loss:
        missing.append(("a loss (loss_fn=...)", "a loss (a factory returning (net, optimizer, loss_fn))"))
    if label is None and not returns_loss:
        missing.append(("a label (label=y)", "a label (--label SHAPE[:DTYPE])"))
    if optimizer is None:
        missing.append(("an optimizer", "an optimizer (--optimizer MODULE:FACTORY)"))
    if missing:
        raise ProbeInputError(
            "the probe runs real training steps, so it needs "
            + " and ".join(python for python, _ in missing)
            + ". Pass them, e.g. audit(net, optimizer, inputs=(x,), label=y, "
            "loss_fn=nn.CrossEntropyLoss(), probe=True), or run_probe(net, optimizer, loss_fn, (x,), y).",
            cli="--probe runs real training steps, so it needs "
            + " and ".join(cli for _, cli in missing)
            + ", e.g. graphaudit audit model.py:build --input 8x3x32x32 --label 8:int32 --probe",
        )
    if not isinstance(optimizer, nn.Optimizer):
        raise ProbeInputError(
            f"the probe expects a mindspore.nn.Optimizer as `optimizer`, got {type(optimizer).__name__}; "
            "pass the optimizer the training uses, e.g. nn.Momentum(net.trainable_params(), 0.01, 0.9)."
        )
    if not returns_loss and not isinstance(loss_fn, nn.Cell):
        raise ProbeInputError(
            f"the probe expects a loss Cell (e.g. nn.CrossEntropyLoss()) as `loss_fn`, got "
            f"{type(loss_fn).__name__}. Wrap a loss function in a Cell whose construct(logits, labels) calls it."
        )
    return net


def _other_threads() -> list[str]:
    current = threading.current_thread()
    return [t.name for t in threading.enumerate() if t is not current and not t.daemon and t.is_alive()]


def step_error(net: nn.Cell, args: tuple[Any, ...], err: Exception, stage: str) -> ProbeStepError:
    others = _other_threads()
    concurrent = (
        f"Other threads are running ({', '.join(others[:3])}): MindSpore's PyNative grad executor is "
        "shared by the whole process and cannot differentiate in two threads at once (two value_and_grad "
        "in two threads fail without graphaudit too); if another thread trains or differentiates, run the "
        "audit when it does not. Otherwise check"
        if others
        else "Check"
    )
    return ProbeStepError(
        f"the probe's training step of {type(net).__name__} raised {type(err).__name__} during {stage} "
        f"(inputs {describe_inputs(args)}):\n{excerpt(err)}\n"
        f"{concurrent} that the data and label are one real batch from your dataset, that "
        "loss_fn(net(*data), label) runs on its own, and that the optimizer was built for this "
        "network. Everything was restored; the original error is chained as __cause__."
    )


class _Contained(nn.Cell):
    """``target(*inputs)``, differentiated; an exception raised inside is kept, not let out of the call.

    An exception that escapes a PyNative ``value_and_grad`` (the user's ``construct`` raising,
    a ``KeyboardInterrupt``) leaves MindSpore's grad executor with that call's graph open: its
    grad flag stays set and the cell stays marked as the top cell, so the user's next training
    step is recorded into the stale graph (BatchNorm's statistics and the weights then differ
    from a run that was never audited). ``_pynative_executor.clear_res()`` closes it but also
    drops the kernels, and with them the state of every Dropout's random generator. So the
    exception is caught here, inside the differentiated call, which then ends normally on a
    zero; :meth:`raise_failure` raises it again once the executor has closed the graph.
    """

    def __init__(self, target: Any) -> None:
        super().__init__(auto_prefix=False)
        self._target = target
        self._failure: list[BaseException] = []

    def construct(self, *inputs: Any) -> Any:
        try:
            return self._target(*inputs)
        except BaseException as err:  # re-raised by raise_failure, after the graph is closed
            self._failure.append(err)
            return ms.ops.zeros((), ms.float32)

    def raise_failure(self) -> None:
        if self._failure:
            failure = self._failure.pop()
            self._failure.clear()
            raise failure


class TrainingStep:
    """One training step as the setup runs it: gradients (scaled as the train cell scales them), the update."""

    def __init__(
        self,
        net: nn.Cell,
        loss_fn: Any,
        returns_loss: bool,
        train: Any,
        weights: list[Any],
        label: Any = None,
    ) -> None:
        self.train = train
        self.skips = isinstance(train, nn.TrainOneStepWithLossScaleCell)
        if isinstance(train, nn.TrainOneStepCell) and isinstance(getattr(train, "network", None), nn.Cell):
            self.target = train.network  # what the train cell differentiates, output casts included
        else:
            spread = not returns_loss and len(spread_label(loss_fn, None, label)) > 1
            self.target = net if returns_loss else StepLoss(net, loss_fn, spread=spread)
        self.weights = weights
        self._contained = _Contained(self.target)

    def plain_gradients(self, args: tuple[Any, ...], weights: list[Any] | None = None) -> tuple[Any, Any]:
        """``(loss, gradients)`` of the target, unscaled (see :class:`_Contained` for a step that raises)."""
        loss, grads = ms.value_and_grad(self._contained, None, weights or self.weights)(*args)
        self._contained.raise_failure()
        return loss, grads

    def gradients(self, args: tuple[Any, ...]) -> tuple[Any, tuple[Any, ...], float]:
        """``(loss, gradients with the train cell's scaling undone where it undoes it, scale)``."""
        scale = scale_value(self.train) if self.train is not None else 1.0
        if scale == 1.0:
            loss, grads = self.plain_gradients(args)
            return loss, tuple(grads), scale
        target, sens = self._contained, Tensor(np.float32(scale))

        def scaled(*inputs: Any) -> Any:
            loss = target(*inputs)
            return loss * ms.ops.cast(sens, loss.dtype), loss

        (_, loss), grads = ms.value_and_grad(scaled, None, self.weights, has_aux=True)(*args)
        target.raise_failure()
        if self.skips:  # TrainOneStepWithLossScaleCell divides them back before the optimizer
            inverse = ms.ops.reciprocal(sens)
            grads = [g * ms.ops.cast(inverse, g.dtype) for g in grads]
        return loss, tuple(grads), scale

    def update_scale(self, overflow: bool) -> bool:
        """Let the train cell's update cell see *overflow*; whether the update is skipped."""
        manager = getattr(self.train, "loss_scaling_manager", None)
        if manager is not None:
            overflow = bool(manager(self.train.scale_sense, Tensor(overflow, ms.bool_)).asnumpy())
        return overflow

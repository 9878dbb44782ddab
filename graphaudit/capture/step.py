"""One real training step, measured: what the forward pass, the gradients and the optimizer did.

``measure_step`` runs ``loss_fn(net(*data), label)``, its gradients with respect to the
optimizer's parameters (and every other trainable parameter, to measure them), then
``optimizer(grads)``, exactly what
``nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)(*data, label)`` does, in
PyNative mode. Values are read before, after the forward/backward pass and after the
optimizer, so that changes made by the forward pass itself (BatchNorm moving statistics)
are told apart from changes made by the optimizer. Then everything is put back bit for bit:
every parameter of the network, the loss and the optimizer (moments, accumulators,
``global_step``, learning rate), ``requires_grad`` flags, training flags, the context mode,
MindSpore's, NumPy's and Python's random states, the per-operation seed counters and the
internal state of the network's random primitives (``nn.Dropout``). The judging is done by
the GA9xx checks, from these numbers. See ``docs/probe.md``.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> net = nn.Dense(3, 2)
    >>> x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.zeros((2, 2), np.float32))
    >>> loss, probes = measure_step(net, nn.SGD(net.trainable_params(), 0.1), nn.MSELoss(), (x,), y)
    >>> [(p.name, p.changed) for p in probes]
    [('weight', True), ('bias', True)]
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, Tensor, nn

from graphaudit.capture.inputs import check_cell, describe_inputs
from graphaudit.capture.isolation import (
    fresh_random_primitives,
    preserved,
    preserved_seed_counters,
    restore_values,
    synchronize,
    tensor_bytes,
)
from graphaudit.capture.optimizer import optimizer_entries, optimizer_state_parameters, unique
from graphaudit.errors import ProbeInputError, ProbeStepError, excerpt
from graphaudit.graph.ids import parameter_node

__all__ = ["ParameterProbe", "check_step_arguments", "measure_step"]


@dataclass(frozen=True)
class ParameterProbe:
    """What the probe step did to one parameter (the network's or the optimizer's).

    ``max_abs_change`` is over the whole step; ``forward_change`` is the part made by the
    forward/backward pass (BatchNorm moving statistics), ``optimizer_change`` the part made by
    ``optimizer(grads)``. Gradient numbers are ``None`` for a parameter with
    ``requires_grad=False`` (no gradient is computed for it). ``changed`` is a bit-level
    comparison, so a change too small to show in ``max_abs_change`` still counts.
    """

    name: str
    node: str
    requires_grad: bool
    in_optimizer: bool
    in_network: bool
    weight_decay: float
    changed: bool
    max_abs_change: float
    forward_change: float
    optimizer_change: float
    grad_norm: float | None = None
    grad_max_abs: float | None = None
    grad_nan: int | None = None
    grad_inf: int | None = None
    moved_by_optimizer: bool = False
    learning_rate: float | None = None
    path: str = ""  # the attribute path in the network, when known (else the name is used)

    @property
    def subject(self) -> str:
        """What findings name this parameter by: its attribute path, or its name."""
        return self.path or self.name

    @property
    def named_as(self) -> str:
        """`` (Parameter name 'x')`` when the name differs from the path, else ``""``."""
        return f" (Parameter name {self.name!r})" if self.path and self.path != self.name else ""

    @property
    def grad_zero(self) -> bool:
        """True when a gradient was computed and every element of it is exactly zero."""
        return self.grad_max_abs == 0.0

    @property
    def grad_finite(self) -> bool | None:
        """Whether the gradient has no NaN/Inf (``None`` when no gradient was computed)."""
        if self.grad_nan is None or self.grad_inf is None:
            return None
        return self.grad_nan == 0 and self.grad_inf == 0

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["grad_zero"] = self.grad_zero
        return data


def _cells_of(*roots: nn.Cell | None) -> list[nn.Cell]:
    return unique(cell for root in roots if root is not None for _, cell in root.cells_and_names())


@contextmanager
def _preserved_cell_grad_flags(cells: list[nn.Cell]) -> Iterator[None]:
    saved = [(cell, vars(cell).get("requires_grad")) for cell in cells]
    try:
        yield
    finally:
        for cell, flag in saved:
            if vars(cell).get("requires_grad") != flag and flag is not None:
                cell.requires_grad = flag


@contextmanager
def _restored_in_place(params: list[Parameter]) -> Iterator[dict[int, np.ndarray]]:
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


class _StepLoss(nn.Cell):
    """``loss_fn(net(*data), label)``: ``nn.WithLossCell`` for any number of data inputs."""

    def __init__(self, net: nn.Cell, loss_fn: nn.Cell) -> None:
        super().__init__(auto_prefix=False)
        self._backbone = net
        self._loss_fn = loss_fn

    def construct(self, *inputs: Any) -> Any:
        return self._loss_fn(self._backbone(*inputs[:-1]), inputs[-1])


class _StepLoss(nn.Cell):
    """``loss_fn(net(*data), label)``: ``nn.WithLossCell`` for any number of data inputs."""

    def __init__(self, net: nn.Cell, loss_fn: nn.Cell) -> None:
        super().__init__(auto_prefix=False)
        self._backbone = net
        self._loss_fn = loss_fn

    def construct(self, *inputs: Any) -> Any:
        return self._loss_fn(self._backbone(*inputs[:-1]), inputs[-1])


# -- numbers -------------------------------------------------------------------------------


def _values(params: Iterable[Parameter]) -> dict[int, np.ndarray]:
    return {id(p): tensor_bytes(p) for p in params}


def _max_abs_diff(before: np.ndarray, after: np.ndarray) -> float:
    if before.size == 0:
        return 0.0
    if before.tobytes() == after.tobytes():
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        diff = np.abs(after.astype(np.float64) - before.astype(np.float64))
    return float(np.max(diff))


def _grad_numbers(grad: Tensor) -> tuple[float, float, int, int]:
    values = tensor_bytes(grad).astype(np.float64).ravel()
    nan = int(np.isnan(values).sum())
    inf = int(np.isinf(values).sum())
    if values.size == 0:
        return 0.0, 0.0, nan, inf
    with np.errstate(invalid="ignore", over="ignore"):
        norm = float(np.linalg.norm(values))
        max_abs = float(np.max(np.abs(values)))
    return norm, max_abs, nan, inf


def _loss_value(loss: Any) -> float:
    try:
        return float(np.mean(tensor_bytes(loss).astype(np.float64)))
    except Exception:
        return float("nan")


def _learning_rate(optimizer: nn.Optimizer, param: Parameter) -> float | None:
    try:
        lr = optimizer.get_lr_parameter(param)
        if isinstance(lr, (list, tuple)):
            lr = lr[0]
        if isinstance(lr, Tensor) and lr.size == 1:
            return float(lr.asnumpy().reshape(()))
    except Exception:
        pass
    return None


# -- the step ------------------------------------------------------------------------------


def check_step_arguments(
    net: Any, optimizer: Any, loss_fn: Any, label: Any, *, returns_loss: bool = False
) -> nn.Cell:
    """*net*, when a training step can be run with these; a :class:`ProbeInputError` saying what is missing.

    *returns_loss*: *net* is a network-with-loss (it computes the loss itself from all its
    inputs), so no separate loss or label is needed.
    """
    net = check_cell(net, function="the probe step")
    missing = []
    if loss_fn is None and not returns_loss:
        missing.append("a loss (loss_fn=...)")
    if label is None and not returns_loss:
        missing.append("a label (label=y)")
    if optimizer is None:
        missing.append("an optimizer")
    if missing:
        raise ProbeInputError(
            "the probe runs one real training step, so it needs "
            + " and ".join(missing)
            + ". Pass them, e.g. audit(net, optimizer, inputs=(x,), label=y, "
            "loss_fn=nn.CrossEntropyLoss(), probe=True), or run_probe(net, optimizer, loss_fn, (x,), y)."
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


def _step_error(net: nn.Cell, args: tuple[Any, ...], err: Exception, stage: str) -> ProbeStepError:
    return ProbeStepError(
        f"the probe's training step of {type(net).__name__} raised {type(err).__name__} during {stage} "
        f"(inputs {describe_inputs(args)}):\n{excerpt(err)}\n"
        "Check that the data and label are one real batch from your dataset, that "
        "loss_fn(net(*data), label) runs on its own, and that the optimizer was built for this "
        "network. Everything was restored; the original error is chained as __cause__."
    )


def measure_step(
    net: nn.Cell,
    optimizer: nn.Optimizer,
    loss_fn: nn.Cell,
    data: tuple[Any, ...],
    label: Any,
    *,
    parameter_nodes: dict[int, str] | None = None,
    training: bool | None = None,
    returns_loss: bool = False,
) -> tuple[float, list[ParameterProbe]]:
    """Run one real training step of *net* on ``(*data, label)``; return the loss and the numbers.

    *data* are the network's positional inputs (normalised: see
    :func:`graphaudit.capture.inputs.normalize_inputs`), *label* the loss's second argument.
    *parameter_nodes* maps ``id(Parameter)`` to a graph node id (``Structure.parameter_nodes``);
    without it nodes are ``param:<name>``. *training* forces the network's training mode for
    the step (``None``: keep the mode it is in, as ``TrainOneStepCell`` does). With
    *returns_loss*, *net* is a network-with-loss: the step differentiates ``net(*data)`` itself
    (*loss_fn* is the loss cell it calls, *label* is not used). Everything is restored
    afterwards, bit for bit, on success and on failure.

    Raises:
        ProbeInputError: no loss, no label or no optimizer.
        ProbeStepError: the step raised (the cause is chained).
    """
    net = check_step_arguments(net, optimizer, loss_fn, label, returns_loss=returns_loss)
    if isinstance(label, np.ndarray):
        label = Tensor(label)

    net_params = unique(net.get_parameters())
    opt_params = unique(optimizer.parameters)
    subjects = unique([*net_params, *opt_params])
    in_optimizer = {id(p) for p in opt_params}
    in_network = {id(p) for p in net_params}
    extra_trainable = [p for p in net_params if p.requires_grad and id(p) not in in_optimizer]
    loss_params = loss_fn.get_parameters() if isinstance(loss_fn, nn.Cell) else []
    all_params = unique([*subjects, *loss_params, *optimizer_state_parameters(optimizer)])
    cells = _cells_of(net, loss_fn, optimizer)
    decay = {id(e.parameter): e.weight_decay for e in optimizer_entries(optimizer)}
    requires_grad = {id(p): bool(p.requires_grad) for p in subjects}

    with ExitStack() as stack:
        stack.enter_context(preserved_seed_counters())
        stack.enter_context(_preserved_cell_grad_flags(cells))
        stack.enter_context(preserved(cells, all_params))  # flags, mode, random states
        saved = stack.enter_context(_restored_in_place(all_params))  # values, before preserved() looks
        stack.enter_context(fresh_random_primitives(cells))
        if ms.get_context("mode") != ms.PYNATIVE_MODE:
            ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
        if training is not None:
            net.set_train(training)  # flags put back by preserved()
        weights = [*optimizer.parameters, *extra_trainable]
        stage = "the forward pass, loss and gradients"
        try:
            if returns_loss:
                loss, grads = ms.value_and_grad(net, None, weights)(*data)
            else:
                loss, grads = ms.value_and_grad(_StepLoss(net, loss_fn), None, weights)(*data, label)
            synchronize()
            middle = _values(subjects)
            stage = f"the optimizer step ({type(optimizer).__name__})"
            optimizer(tuple(grads[: len(optimizer.parameters)]))
            synchronize()
            after = _values(subjects)
        except Exception as err:
            raise _step_error(net, data, err, stage) from err
        before = {id(p): saved[id(p)] for p in subjects}
        grad_of = {id(p): g for p, g in zip(weights, grads)}
        probes = []
        for param in subjects:
            key = id(param)
            numbers = _grad_numbers(grad_of[key]) if requires_grad[key] and key in grad_of else None
            probes.append(
                ParameterProbe(
                    name=param.name,
                    node=(parameter_nodes or {}).get(key) or parameter_node(param.name),
                    requires_grad=requires_grad[key],
                    in_optimizer=key in in_optimizer,
                    in_network=key in in_network,
                    weight_decay=decay.get(key, 0.0),
                    changed=before[key].tobytes() != after[key].tobytes(),
                    max_abs_change=_max_abs_diff(before[key], after[key]),
                    forward_change=_max_abs_diff(before[key], middle[key]),
                    optimizer_change=_max_abs_diff(middle[key], after[key]),
                    grad_norm=None if numbers is None else numbers[0],
                    grad_max_abs=None if numbers is None else numbers[1],
                    grad_nan=None if numbers is None else numbers[2],
                    grad_inf=None if numbers is None else numbers[3],
                    moved_by_optimizer=middle[key].tobytes() != after[key].tobytes(),
                    learning_rate=_learning_rate(optimizer, param) if key in in_optimizer else None,
                )
            )
        return _loss_value(loss), probes

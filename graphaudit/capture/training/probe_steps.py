"""Real training steps, measured: what the forward pass, the gradients and the optimizer did.

``measure_steps`` runs N training steps on the same batch, each one exactly what
``nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)(*data, label)`` does, in
PyNative mode: ``loss_fn(net(*data), label)``, its gradients with respect to the optimizer's
parameters (and every other trainable parameter, to measure them), then
``optimizer(grads)``. Given the train-step cell the setup trains with
(:mod:`graphaudit.capture.training.loss_scale`), it differentiates that cell's network and scales the
gradients as it does: ``sens`` for ``TrainOneStepCell``; for
``TrainOneStepWithLossScaleCell`` the loss scale, the division back, the overflow check and
the update cell (``DynamicLossScaleUpdateCell``), skipping the update of a step that
overflows, as on GPU. A skipped step does not count: the probe stops after N steps that
updated (or ``MAX_SKIPPED`` more that did not). Per step it records the loss, the loss scale,
and per parameter ‖w‖, ‖Δw‖ (the optimizer's) and the gradient's norm; the first step that
updated is measured in full (:class:`ParameterProbe`: before, after the forward/backward pass,
after the optimizer, so that BatchNorm statistics moved by the forward pass are told apart).

Then everything is put back bit for bit: every parameter of the network, the loss, the
optimizer (moments, ``global_step``, learning rate) and the train cell (``scale_sense``, the
update cell's counters), ``requires_grad`` flags, training flags, the context mode,
MindSpore's, NumPy's and Python's random states, the per-operation seed counters and the
internal state of the network's random primitives. See ``docs/probe.md``.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> net = nn.Dense(3, 2)
    >>> x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.zeros((2, 2), np.float32))
    >>> loss, probes = measure_step(net, nn.SGD(net.trainable_params(), 0.1), nn.MSELoss(), (x,), y)
    >>> [(p.name, p.changed) for p in probes]
    [('weight', True), ('bias', True)]
    >>> measured = measure_steps(net, nn.SGD(net.trainable_params(), 0.1), nn.MSELoss(), (x,), y, steps=3)
    >>> [s.index for s in measured.steps], measured.steps[0].loss > measured.steps[-1].loss
    ([1, 2, 3], True)
"""

from __future__ import annotations

from contextlib import ExitStack
from dataclasses import asdict, dataclass
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

from graphaudit.capture.network.isolation import (
    fresh_random_primitives,
    preserved,
    preserved_seed_counters,
    synchronize,
    tensor_bytes,
)
from graphaudit.capture.network.wrappers import EXCLUSIVE
from graphaudit.capture.training.loss_scale import GradientScaling, gradient_scaling, scale_value
from graphaudit.capture.training.optimizer import optimizer_entries, optimizer_state_parameters, unique
from graphaudit.capture.training.step_harness import (
    TrainingStep,
    cells_of,
    check_step_arguments,
    closed_grad_graphs,
    graphs_not_saved,
    jit_marks_removed,
    preserved_cell_grad_flags,
    restored_in_place,
    step_error,
)
from graphaudit.capture.training.step_readings import (
    StepChange,
    diff_norm,
    grad_numbers,
    groups_of,
    l2,
    learning_rate,
    loss_value,
    values,
)
from graphaudit.graph.ids import parameter_node

__all__ = [
    "MAX_SKIPPED",
    "ParameterProbe",
    "StepRecord",
    "StepsMeasured",
    "check_step_arguments",
    "measure_step",
    "measure_steps",
]

#: Steps skipped on overflow that the probe runs beyond the N asked for, at most (a dynamic
#: loss scale of 2**24 halves to 1 in 24 of them).
MAX_SKIPPED = 32


@dataclass(frozen=True)
class ParameterProbe:
    """What the (first updating) probe step did to one parameter (the network's or the optimizer's).

    ``max_abs_change`` is over the whole step; ``forward_change`` is the part made by the
    forward/backward pass (BatchNorm moving statistics), ``optimizer_change`` the part made by
    ``optimizer(grads)``. Gradient numbers are ``None`` for a parameter with
    ``requires_grad=False`` (no gradient is computed for it). ``changed`` is a bit-level
    comparison, so a change too small to show in ``max_abs_change`` still counts. ``group``
    is the index of the optimizer's learning-rate group, ``shape`` the parameter's shape.
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
    group: int = 0
    shape: tuple[int, ...] = ()

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


@dataclass(frozen=True)
class StepRecord:
    """One probe step: its loss, whether its update ran, the loss scale, and per-parameter norms.

    The tuples follow the order of the measured parameters (:attr:`StepsMeasured.parameters`):
    ``weight_norms`` ‖w‖ before the update, ``update_norms`` ‖Δw‖ made by ``optimizer(grads)``
    (0 for a skipped step), ``grad_norms`` the norm of the true (unscaled) gradient, ``None``
    where none is computed. ``overflow``/``loss_scale`` are ``None`` without loss scaling.
    """

    index: int
    loss: float
    applied: bool = True
    overflow: bool | None = None
    loss_scale: float | None = None
    weight_norms: tuple[float, ...] = ()
    update_norms: tuple[float, ...] = ()
    grad_norms: tuple[float | None, ...] = ()

    def ratio(self, position: int) -> float | None:
        """‖Δw‖/‖w‖ of the parameter at *position* (``None`` when ‖w‖ is 0)."""
        weight = self.weight_norms[position]
        return self.update_norms[position] / weight if weight > 0 else None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class StepsMeasured:
    """What :func:`measure_steps` found: the first step's loss, its full numbers, every step."""

    loss: float
    parameters: list[ParameterProbe]
    steps: tuple[StepRecord, ...]
    scaling: GradientScaling | None = None
    requested: int = 1


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

    :func:`measure_steps` with ``steps=1``; see it for the arguments.
    """
    measured = measure_steps(
        net,
        optimizer,
        loss_fn,
        data,
        label,
        steps=1,
        parameter_nodes=parameter_nodes,
        training=training,
        returns_loss=returns_loss,
    )
    return measured.loss, measured.parameters


def measure_steps(
    net: nn.Cell,
    optimizer: nn.Optimizer,
    loss_fn: nn.Cell,
    data: tuple[Any, ...],
    label: Any,
    *,
    steps: int = 1,
    parameter_nodes: dict[int, str] | None = None,
    training: bool | None = None,
    returns_loss: bool = False,
    given: Any = None,
) -> StepsMeasured:
    """Run *steps* real training steps of *net* on ``(*data, label)``, the same batch each time.

    *data* are the network's positional inputs (normalised: see
    :func:`graphaudit.capture.network.inputs.normalize_inputs`), *label* the loss's second argument.
    *parameter_nodes* maps ``id(Parameter)`` to a graph node id (``Structure.parameter_nodes``);
    without it nodes are ``param:<name>``. *training* forces the network's training mode for
    the steps (``None``: keep the mode it is in, as ``TrainOneStepCell`` does). With
    *returns_loss*, *net* is a network-with-loss: the step differentiates ``net(*data)`` itself.
    *given* is the training setup as the user passed it (a ``TrainOneStepCell``,
    ``TrainOneStepWithLossScaleCell`` or ``Model``): its loss scaling is applied as it applies
    it. Everything is restored afterwards, bit for bit, on success and on failure.

    Raises:
        ProbeInputError: no loss, no label or no optimizer.
        ProbeStepError: a step raised (the cause is chained).
    """
    net = check_step_arguments(net, optimizer, loss_fn, label, returns_loss=returns_loss)
    if isinstance(label, np.ndarray):
        label = Tensor(label)
    scaling = gradient_scaling(given, optimizer) if given is not None else None
    train = scaling.train_cell if scaling is not None else None

    net_params = unique(net.get_parameters())
    opt_params = unique(optimizer.parameters)
    subjects = unique([*net_params, *opt_params])
    in_optimizer = {id(p) for p in opt_params}
    in_network = {id(p) for p in net_params}
    extra_trainable = [p for p in net_params if p.requires_grad and id(p) not in in_optimizer]
    loss_params = loss_fn.get_parameters() if isinstance(loss_fn, nn.Cell) else []
    train_params = train.get_parameters() if train is not None else []
    all_params = unique([*subjects, *loss_params, *optimizer_state_parameters(optimizer), *train_params])
    cells = cells_of(net, loss_fn, optimizer, train)
    requires_grad = {id(p): bool(p.requires_grad) for p in subjects}
    names = {id(p): p.name for p in subjects}  # the step's construct may rename them (put back)

    with EXCLUSIVE, ExitStack() as stack:
        stack.enter_context(closed_grad_graphs())
        stack.enter_context(graphs_not_saved())
        stack.enter_context(jit_marks_removed(cells))
        stack.enter_context(preserved_seed_counters())
        stack.enter_context(preserved_cell_grad_flags(cells))
        stack.enter_context(preserved(cells, all_params))  # flags, mode, random states
        saved = stack.enter_context(restored_in_place(all_params))  # values, before preserved() looks
        stack.enter_context(fresh_random_primitives(cells))
        if ms.get_context("mode") != ms.PYNATIVE_MODE:
            ms.set_context(mode=ms.PYNATIVE_MODE)  # put back by preserved()
        if training is not None:
            net.set_train(training)  # flags put back by preserved()
        weights = [*optimizer.parameters, *extra_trainable]
        step = TrainingStep(net, loss_fn, returns_loss, train, weights, label)
        args = tuple(data) if returns_loss else (*data, label)
        records, first = _run(step, optimizer, args, net, data, subjects, weights, saved, max(1, steps))
        before, middle, after, grads, scale = first
        grad_of = {id(p): g for p, g in zip(weights, grads)}
        divide = scale if (scale != 1.0 and not step.skips) else 1.0
        decay = {id(e.parameter): e.weight_decay for e in optimizer_entries(optimizer)}
        group = groups_of(optimizer)
        probes = []
        for param in subjects:
            key = id(param)
            numbers = grad_numbers(grad_of[key], divide) if requires_grad[key] and key in grad_of else None
            moved = StepChange(before[key], middle[key], after[key])
            probes.append(
                ParameterProbe(
                    name=names[key],
                    node=(parameter_nodes or {}).get(key) or parameter_node(names[key]),
                    requires_grad=requires_grad[key],
                    in_optimizer=key in in_optimizer,
                    in_network=key in in_network,
                    weight_decay=decay.get(key, 0.0),
                    changed=moved.changed,
                    max_abs_change=moved.total,
                    forward_change=moved.forward,
                    optimizer_change=moved.optimizer,
                    grad_norm=None if numbers is None else numbers[0],
                    grad_max_abs=None if numbers is None else numbers[1],
                    grad_nan=None if numbers is None else numbers[2],
                    grad_inf=None if numbers is None else numbers[3],
                    moved_by_optimizer=moved.by_optimizer,
                    learning_rate=learning_rate(optimizer, param) if key in in_optimizer else None,
                    group=group.get(key, 0),
                    shape=tuple(int(d) for d in param.shape),
                )
            )
        return StepsMeasured(records[0].loss, probes, tuple(records), scaling, steps)


def _run(
    step: TrainingStep,
    optimizer: nn.Optimizer,
    args: tuple[Any, ...],
    net: nn.Cell,
    data: tuple[Any, ...],
    subjects: list[Any],
    weights: list[Any],
    saved: dict[int, np.ndarray],
    steps: int,
) -> tuple[list[StepRecord], tuple[Any, ...]]:
    """Run the steps; every step's record, and the full numbers of the first one that updated."""
    in_optimizer = len(optimizer.parameters)
    records: list[StepRecord] = []
    first: tuple[Any, ...] | None = None
    last: tuple[Any, ...] | None = None
    pre = {id(p): saved[id(p)] for p in subjects}
    applied_count = 0
    while applied_count < steps and len(records) < steps + (MAX_SKIPPED if step.skips else 0):
        stage = "the forward pass, loss and gradients"
        try:
            loss, grads, scale = step.gradients(args)
            grads_np = [tensor_bytes(g) for g in grads]
            middle = values(subjects)
            overflow = None
            applied = True
            if step.skips:
                finite = all(np.isfinite(g).all() for g in grads_np[:in_optimizer])
                overflow = step.update_scale(not finite)
                applied = not overflow
            stage = f"the optimizer step ({type(optimizer).__name__})"
            if applied:
                optimizer(grads[:in_optimizer])
            synchronize()
            post = values(subjects)
        except Exception as err:
            raise step_error(net, data, err, stage) from err
        divide = scale if (scale != 1.0 and not step.skips) else 1.0
        grad_of = {id(p): g for p, g in zip(weights, grads_np)}
        records.append(
            StepRecord(
                index=len(records) + 1,
                loss=loss_value(loss),
                applied=applied,
                overflow=overflow,
                loss_scale=scale if (step.skips or scale != 1.0) else None,
                weight_norms=tuple(l2(pre[id(p)]) for p in subjects),
                update_norms=tuple(diff_norm(middle[id(p)], post[id(p)]) for p in subjects),
                grad_norms=tuple(l2(grad_of[id(p)]) / divide if id(p) in grad_of else None for p in subjects),
            )
        )
        last = (pre, middle, post, grads_np, scale)
        if applied:
            applied_count += 1
            if first is None:
                first = last
        elif scale_value(step.train) == scale:
            break  # a fixed scale overflows again: the same batch and weights give the same gradients
        pre = post
    if first is None and step.skips and last is not None:
        # Every step overflowed: measure the gradients once more at scale 1 (no update), so that
        # GA903 tells gradients that are NaN at any scale from a scale float16 cannot hold.
        try:
            _, grads = step.plain_gradients(args, weights)
            last = (*last[:3], [tensor_bytes(g) for g in grads], 1.0)
        except Exception as err:
            raise step_error(net, data, err, "the gradients at loss scale 1") from err
    return records, first if first is not None else last  # type: ignore[return-value]

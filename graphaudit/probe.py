"""The probe step: run ONE real training step and confirm from the numbers what trains.

The static checks read the optimizer's parameter list and the ``requires_grad`` flags; the
probe *runs* the step those describe: the forward pass, the loss, the gradients of every
parameter the optimizer holds (and of every other trainable one), and ``optimizer(grads)``,
exactly what ``nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)(*data, label)``
does. It then compares every parameter before and after and reports:

- ``GA901 probe-trainable-did-not-change`` (error; warning when a non-zero gradient only
  vanished in float rounding): a parameter in the optimizer with ``requires_grad=True`` that
  the step left bit-identical;
- ``GA902 probe-frozen-changed`` (error): a frozen parameter (``requires_grad=False``, or not
  in the optimizer) that the optimizer moved, with the reason (weight decay, stale momentum);
- ``GA903 probe-non-finite-gradient`` (error): a NaN or Inf in a trainable parameter's gradient;
- ``GA904 probe-zero-gradient`` (warning): a trainable parameter whose gradient is exactly zero;
- ``GA905 probe-trainable-not-updated`` (error): a trainable parameter that is not in the
  optimizer, confirmed unchanged by the step.

Changes made by the forward pass itself (BatchNorm moving statistics, a ``Parameter`` written
in ``construct``) are measured apart and never reported as a frozen parameter that changed.

Afterwards everything is put back bit for bit: every parameter of the network, the loss and
the optimizer (moments, accumulators, ``global_step``, learning rate), ``requires_grad``
flags, training flags, the context mode, MindSpore's, NumPy's and Python's random states, the
per-operation seed counters and the internal state of the network's random primitives
(``nn.Dropout``). See ``docs/probe.md``.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.probe import run_probe
    >>> net = nn.SequentialCell([nn.Dense(3, 4), nn.Dense(4, 2)])
    >>> optimizer = nn.SGD(net[1].trainable_params(), learning_rate=0.1)  # net[0] left out
    >>> x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.zeros((2, 2), np.float32))
    >>> result = run_probe(net, optimizer, nn.MSELoss(), (x,), y)
    >>> [(f.check_id, f.subject) for f in result.findings]
    [('GA905', '0.bias'), ('GA905', '0.weight')]
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Iterable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import asdict, dataclass, field
from typing import Any

import mindspore as ms
import numpy as np
from mindspore import Parameter, ParameterTuple, Tensor, nn

from graphaudit.capture import check_cell, describe_inputs, normalize_inputs
from graphaudit.capture.isolation import (
    fresh_random_primitives,
    preserved,
    preserved_seed_counters,
    synchronize,
    tensor_bytes,
    write_in_place,
)
from graphaudit.context import _optimizer_entries
from graphaudit.errors import ForwardError, InputError
from graphaudit.findings import Finding, severity_rank

__all__ = [
    "PROBE_CHECKS",
    "ParameterProbe",
    "ProbeInputError",
    "ProbeResult",
    "ProbeStepError",
    "optimizer_state_parameters",
    "probe_findings",
    "run_probe",
]

#: The probe's finding IDs and names (a range of their own, apart from the static checks).
PROBE_CHECKS: dict[str, str] = {
    "GA901": "probe-trainable-did-not-change",
    "GA902": "probe-frozen-changed",
    "GA903": "probe-non-finite-gradient",
    "GA904": "probe-zero-gradient",
    "GA905": "probe-trainable-not-updated",
}

# Attributes that mark a primitive keeping a random state of its own (ops.Dropout & co.).


class ProbeInputError(InputError):
    """The probe cannot run: no loss, no label, or no optimizer to step."""


class ProbeStepError(ForwardError):
    """The training step itself (forward, loss, gradients or optimizer) raised."""


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


@dataclass
class ProbeResult:
    """The outcome of :func:`run_probe`: findings, the loss, per-parameter numbers."""

    findings: list[Finding]
    loss: float
    parameters: list[ParameterProbe] = field(default_factory=list)
    optimizer: str = ""

    def __post_init__(self) -> None:
        self.findings = sorted(self.findings, key=Finding.sort_key)

    @property
    def ok(self) -> bool:
        """True when no finding has severity ``error``."""
        return not any(f.severity == "error" for f in self.findings)

    def parameter(self, name: str) -> ParameterProbe:
        """The numbers of the (first) parameter called *name*; ``KeyError`` if none."""
        for probe in self.parameters:
            if probe.name == name:
                return probe
        raise KeyError(name)

    def by_check(self, check_id: str) -> list[Finding]:
        return [f for f in self.findings if f.check_id == check_id]

    def to_dict(self) -> dict[str, Any]:
        return {
            "loss": self.loss,
            "optimizer": self.optimizer,
            "findings": [f.to_dict() for f in self.findings],
            "parameters": [p.to_dict() for p in self.parameters],
        }

    def table(self) -> str:
        """One line per parameter: name, flags, max |change|, gradient norm."""
        rows = [f"{'parameter':<40} {'rg':>2} {'opt':>3} {'max|change|':>12} {'grad norm':>12}"]
        for p in self.parameters:
            grad = "-" if p.grad_norm is None else f"{p.grad_norm:12.4g}"
            rows.append(
                f"{p.name:<40} {'y' if p.requires_grad else 'n':>2} {'y' if p.in_optimizer else 'n':>3} "
                f"{p.max_abs_change:12.4g} {grad:>12}"
            )
        return "\n".join(rows)

    def __str__(self) -> str:
        worst = min((f.severity for f in self.findings), key=severity_rank, default="clean")
        lines = [
            f"probe step ({self.optimizer}): loss {self.loss:.6g}, {len(self.findings)} finding(s), {worst}"
        ]
        lines.extend(f"  {f}" for f in self.findings)
        return "\n".join(lines)


# -- gathering what the step can touch ---------------------------------------------------


def _unique(items: Iterable[Any]) -> list[Any]:
    seen: dict[int, Any] = {}
    for item in items:
        if item is not None and id(item) not in seen:
            seen[id(item)] = item
    return list(seen.values())


def optimizer_state_parameters(optimizer: nn.Cell) -> list[Parameter]:
    """Every Parameter an optimizer holds: the ones it updates and all of its own state.

    Union of ``get_parameters()``, ``parameters_and_names()``, ``_params`` and every
    ``Parameter`` / ``ParameterTuple`` attribute of the optimizer and its sub-cells (moments,
    accumulators, ``global_step``, the learning rate, ``beta1_power``...).
    """
    found: list[Any] = list(optimizer.get_parameters())
    found.extend(p for _, p in optimizer.parameters_and_names())
    for _, cell in optimizer.cells_and_names():
        found.extend(getattr(cell, "_params", {}).values())
        for value in vars(cell).values():
            if isinstance(value, Parameter):
                found.append(value)
            elif isinstance(value, (ParameterTuple, list, tuple)):
                found.extend(v for v in value if isinstance(v, Parameter))
    return _unique(found)


def _cells_of(*roots: nn.Cell | None) -> list[nn.Cell]:
    return _unique(cell for root in roots if root is not None for _, cell in root.cells_and_names())


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
        errors: list[Exception] = []
        for param in params:
            try:
                value = saved[id(param)]
                if tensor_bytes(param).tobytes() != value.tobytes():
                    write_in_place(param, value)
            except Exception as err:  # restore the others, report the first failure
                errors.append(err)
        if errors:
            raise errors[0]


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


def _check_arguments(net: Any, optimizer: Any, loss_fn: Any, label: Any) -> nn.Cell:
    net = check_cell(net, function="run_probe")
    missing = []
    if loss_fn is None:
        missing.append("a loss (loss_fn=...)")
    if label is None:
        missing.append("a label (inputs=(x, y), the label last)")
    if optimizer is None:
        missing.append("an optimizer")
    if missing:
        raise ProbeInputError(
            "the probe runs one real training step, so it needs "
            + " and ".join(missing)
            + ". Pass inputs=(x, y) with the label last and a loss, e.g. "
            "audit(net, optimizer, inputs=(x, y), loss_fn=nn.CrossEntropyLoss(), probe=True), "
            "or run_probe(net, optimizer, loss_fn, (x,), y)."
        )
    if not isinstance(optimizer, nn.Optimizer):
        raise ProbeInputError(
            f"the probe expects a mindspore.nn.Optimizer as `optimizer`, got {type(optimizer).__name__}; "
            "pass the optimizer the training uses, e.g. nn.Momentum(net.trainable_params(), 0.01, 0.9)."
        )
    if not isinstance(loss_fn, nn.Cell):
        raise ProbeInputError(
            f"the probe expects a loss Cell (e.g. nn.CrossEntropyLoss()) as `loss_fn`, got "
            f"{type(loss_fn).__name__}. Wrap a loss function in a Cell whose construct(logits, labels) calls it."
        )
    return net


def _step_error(net: nn.Cell, args: tuple[Any, ...], err: Exception, stage: str) -> ProbeStepError:
    first_lines = "\n".join(str(err).strip().splitlines()[:12])
    return ProbeStepError(
        f"the probe's training step of {type(net).__name__} raised {type(err).__name__} during {stage} "
        f"(inputs {describe_inputs(args)}):\n{textwrap.indent(first_lines, '    ')}\n"
        "Check that the data and label are one real batch from your dataset, that "
        "loss_fn(net(*data), label) runs on its own, and that the optimizer was built for this "
        "network. Everything was restored; the original error is chained as __cause__."
    )


def run_probe(
    net: nn.Cell,
    optimizer: nn.Optimizer,
    loss_fn: nn.Cell,
    data: Any,
    label: Any,
    *,
    parameter_nodes: dict[int, str] | None = None,
    is_frozen: Callable[[str], bool] | None = None,
    training: bool | None = None,
) -> ProbeResult:
    """Run one real training step of *net* and confirm from the numbers what trains.

    *data* are the network's inputs (a tuple, passed positionally, or one tensor) and *label*
    the loss's second argument: the step is ``loss_fn(net(*data), label)``, its gradients
    with respect to the optimizer's parameters (and every other trainable parameter, to
    report them), then ``optimizer(grads)``, run in PyNative mode. *parameter_nodes* maps
    ``id(Parameter)`` to a graph node id (``Structure.parameter_nodes``); without it nodes
    are ``param:<name>``. *is_frozen* (e.g. ``spec.is_frozen``) turns GA905 into ``info`` for
    a parameter the design declares frozen. *training* forces the network's training mode
    for the step (``None``: keep the mode it is in, as ``TrainOneStepCell`` does).

    Everything is restored afterwards, bit for bit, on success and on failure.

    Raises:
        ProbeInputError: no loss, no label or no optimizer (an :class:`InputError`).
        ProbeStepError: the step raised (a :class:`ForwardError`; the cause is chained).
    """
    net = _check_arguments(net, optimizer, loss_fn, label)
    args = normalize_inputs(net, data)
    if isinstance(label, np.ndarray):
        label = Tensor(label)

    net_params = _unique(net.get_parameters())
    opt_params = _unique(optimizer.parameters)
    subjects = _unique([*net_params, *opt_params])
    in_optimizer = {id(p) for p in opt_params}
    in_network = {id(p) for p in net_params}
    extra_trainable = [p for p in net_params if p.requires_grad and id(p) not in in_optimizer]
    all_params = _unique([*subjects, *loss_fn.get_parameters(), *optimizer_state_parameters(optimizer)])
    cells = _cells_of(net, loss_fn, optimizer)
    decay = {id(e.parameter): e.weight_decay for e in _optimizer_entries(optimizer)}
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
            grad_fn = ms.value_and_grad(_StepLoss(net, loss_fn), None, weights)
            loss, grads = grad_fn(*args, label)
            synchronize()
            middle = _values(subjects)
            stage = f"the optimizer step ({type(optimizer).__name__})"
            optimizer(tuple(grads[: len(optimizer.parameters)]))
            synchronize()
            after = _values(subjects)
        except Exception as err:
            raise _step_error(net, args, err, stage) from err
        before = {id(p): saved[id(p)] for p in subjects}
        grad_of = {id(p): g for p, g in zip(weights, grads)}
        probes = []
        for param in subjects:
            key = id(param)
            numbers = _grad_numbers(grad_of[key]) if requires_grad[key] and key in grad_of else None
            probes.append(
                ParameterProbe(
                    name=param.name,
                    node=(parameter_nodes or {}).get(key, f"param:{param.name}"),
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
                )
            )
        moved_by_optimizer = {id(p): middle[id(p)].tobytes() != after[id(p)].tobytes() for p in subjects}
        lrs = {id(p): _learning_rate(optimizer, p) for p in opt_params}
        loss_value = _loss_value(loss)

    findings: list[Finding] = []
    for param, probe in zip(subjects, probes):
        findings.extend(
            _findings_for(probe, moved_by_optimizer[id(param)], lrs.get(id(param)), loss_value, is_frozen)
        )
    return ProbeResult(findings, loss_value, probes, type(optimizer).__name__)


# -- findings ------------------------------------------------------------------------------


def _finding(check_id: str, severity: str, probe: ParameterProbe, message: str, fix: str) -> Finding:
    return Finding(check_id, PROBE_CHECKS[check_id], severity, probe.name, message, fix, (probe.node,))  # type: ignore[arg-type]


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"


def _findings_for(
    p: ParameterProbe,
    moved_by_optimizer: bool,
    lr: float | None,
    loss: float,
    is_frozen: Callable[[str], bool] | None,
) -> Iterator[Finding]:
    name = p.name
    if p.requires_grad and p.grad_finite is False:
        kinds = ", ".join(
            f"{count} {what}" for count, what in ((p.grad_nan, "NaN"), (p.grad_inf, "Inf")) if count
        )
        loss_note = f" The loss itself is {loss:g}." if not math.isfinite(loss) else ""
        yield _finding(
            "GA903",
            "error",
            p,
            f"The gradient of {name} has non-finite values ({kinds}) after one training step.{loss_note} "
            "One such step turns the weights into NaN/Inf and training silently diverges.",
            "Find the operation that produces NaN/Inf: log, sqrt or division of zero or negative values, "
            "exp overflow, a loss fed values outside its domain; guard it (ops.clamp, an epsilon, "
            "log_softmax instead of log(softmax)), check the batch for NaN, and lower the learning rate or "
            "use loss scaling for float16.",
        )
    if p.requires_grad and p.grad_zero:
        yield _finding(
            "GA904",
            "warning",
            p,
            f"The gradient of {name} is exactly zero on the probe batch: the loss does not depend on it "
            "(a dead branch: output unused, multiplied by zero, behind ops.stop_gradient, or a ReLU that "
            "is never active)"
            + ("; it is not even a parameter of the network." if not p.in_network else "."),
            f"Connect the branch that uses {name} to the loss; if it is meant to stay fixed set "
            "requires_grad=False; if it only gets a gradient on some batches (a class-conditional "
            "branch, embedding rows), probe with a batch that exercises it.",
        )
    if p.in_optimizer and p.requires_grad and not p.changed:
        severity = "error"
        if p.grad_zero:
            cause = "its gradient is exactly zero (see GA904)"
            fix = (
                f"Make {name} reach the loss (see GA904), or freeze it explicitly: requires_grad=False and "
                "leave it out of the optimizer."
            )
        elif lr == 0.0:
            cause = "its learning rate is 0"
            fix = f"Give {name}'s parameter group a non-zero learning rate, or freeze it explicitly."
        else:
            severity = "warning"  # the step ran; the update vanished in float rounding
            cause = (
                f"its gradient (norm {_g(p.grad_norm)}, learning rate {_g(lr)}) gives an update below the float "
                "resolution of its values. A gradient that is only rounding noise is what a bias followed "
                "by BatchNorm or LayerNorm gets: the normalisation cancels it"
            )
            fix = (
                f"If {name} is a bias right before a normalisation layer, build that layer without it "
                "(has_bias=False); otherwise check the learning rate, loss scaling and gradient clipping."
            )
        yield _finding(
            "GA901",
            severity,
            p,
            f"{name} is in the optimizer with requires_grad=True, but one training step left it bit-identical: {cause}.",
            fix,
        )
    frozen = not p.requires_grad or not p.in_optimizer
    if frozen and moved_by_optimizer:
        how = "requires_grad=False" if not p.requires_grad else "not in the optimizer"
        if p.in_optimizer and (math.isnan(p.weight_decay) or p.weight_decay > 0):
            decay = (
                "a weight decay schedule"
                if math.isnan(p.weight_decay)
                else f"weight_decay={p.weight_decay:g}"
            )
            why = f"it is in the optimizer with {decay}, and weight decay moves it even though its gradient is zero"
            fix = (
                f"Build the optimizer from net.trainable_params() so that {name} is left out, or put it in a "
                "parameter group with weight_decay=0.0."
            )
        elif p.in_optimizer:
            why = (
                "it is in the optimizer and the optimizer's state for it (momentum or moments accumulated "
                "before it was frozen) still moves it"
            )
            fix = f"Build the optimizer from net.trainable_params() so that {name} is left out."
        else:
            why = "the optimizer step wrote it although it is not among optimizer.parameters"
            fix = f"Find what writes {name} during optimizer(grads) (a shared or aliased Parameter)."
        yield _finding(
            "GA902",
            "error",
            p,
            f"{name} is frozen ({how}) but the optimizer step changed it by up to "
            f"{p.optimizer_change:.3g}: {why}. A frozen (e.g. pretrained) weight drifts every step.",
            fix,
        )
    if p.requires_grad and not p.in_optimizer and p.in_network and not moved_by_optimizer:
        declared = is_frozen is not None and is_frozen(name)
        forward_note = (
            " (the forward pass writes it: if it is a buffer, set requires_grad=False)"
            if p.forward_change
            else ""
        )
        grad_note = "" if p.grad_norm is None else f" Its gradient (norm {_g(p.grad_norm)}) was thrown away."
        yield _finding(
            "GA905",
            "info" if declared else "error",
            p,
            f"{name} is trainable (requires_grad=True) but not in the optimizer, and the training step did "
            f"not update it{forward_note}.{grad_note}"
            + (
                " The design declares it frozen."
                if declared
                else " It keeps its initial value for all of training."
            ),
            f"Build the optimizer from net.trainable_params() (or add {name} to a parameter group); if it is "
            "meant to stay fixed, set requires_grad=False.",
        )


def probe_findings(ctx: Any, check_id: str) -> list[Finding]:
    """The findings of one GA9xx check from the probe that ``audit(..., probe=True)`` ran.

    Example:
        >>> from types import SimpleNamespace
        >>> probe_findings(SimpleNamespace(extra={}), "GA901")
        []
    """
    result = ctx.extra.get("probe")
    return result.by_check(check_id) if result is not None else []

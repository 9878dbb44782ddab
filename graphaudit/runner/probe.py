"""The probe step: run ONE real training step and confirm from the numbers what trains.

The static checks read the optimizer's parameter list and the ``requires_grad`` flags; the
probe *runs* the step those describe (:func:`graphaudit.capture.training.probe_steps.measure_step`) and the
GA9xx checks judge its numbers:

- ``GA901 probe-trainable-did-not-change`` (error; warning when a non-zero gradient only
  vanished in float rounding): a parameter in the optimizer with ``requires_grad=True`` that
  the step left bit-identical;
- ``GA902 probe-frozen-changed`` (error): a frozen parameter (``requires_grad=False``, or not
  in the optimizer) that the optimizer moved, with the reason (weight decay, stale momentum);
- ``GA903 probe-non-finite-gradient`` (error): a NaN or Inf in a trainable parameter's gradient;
- ``GA904 probe-zero-gradient`` (warning): a trainable parameter whose gradient is exactly zero;
- ``GA905 probe-trainable-not-updated`` (error): a trainable parameter that is not in the
  optimizer, confirmed unchanged by the step (inside ``audit()`` it is merged into GA201).

``audit(..., probe=True)`` runs it as part of an audit; :func:`run_probe` runs it alone,
through the same runner (:func:`~graphaudit.runner.run_checks`: a check whose evidence is
not there, such as the curve checks GA906-GA913 on one step, is not run). Everything is
put back bit for bit afterwards. See ``docs/probe.md``. ``graphaudit.probe`` is the same
module's public name.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.runner.probe import run_probe
    >>> net = nn.SequentialCell([nn.Dense(3, 4), nn.Dense(4, 2)])
    >>> optimizer = nn.SGD(net[1].trainable_params(), learning_rate=0.1)  # net[0] left out
    >>> x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.zeros((2, 2), np.float32))
    >>> result = run_probe(net, optimizer, nn.MSELoss(), (x,), y)
    >>> [(f.check_id, f.subject) for f in result.findings]
    [('GA905', '0')]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from graphaudit.capture.network.inputs import normalize_inputs
from graphaudit.capture.training.optimizer import optimizer_state_parameters
from graphaudit.capture.training.probe_steps import ParameterProbe, check_step_arguments, measure_step
from graphaudit.checks import all_checks
from graphaudit.errors import ProbeInputError, ProbeStepError
from graphaudit.errors.arguments import checked_call
from graphaudit.findings import printable, severity_rank
from graphaudit.report import Report

__all__ = [
    "PROBE_CHECKS",
    "ParameterProbe",
    "ProbeInputError",
    "ProbeResult",
    "ProbeStepError",
    "optimizer_state_parameters",
    "run_probe",
]


#: The probe's finding IDs and names (read from the checks' declarations).
PROBE_CHECKS: dict[str, str] = {i: c.name for i, c in all_checks().items() if c.needs_probe}


@dataclass
class ProbeResult(Report):
    """The outcome of :func:`run_probe`: a :class:`~graphaudit.report.Report` with the step's numbers.

    Besides what every report holds (findings, what was suppressed, the checks run and not
    run), ``loss`` is the step's loss and ``parameters`` the per-parameter numbers.
    """

    loss: float = float("nan")
    parameters: list[ParameterProbe] = field(default_factory=list)
    optimizer: str = ""

    def parameter(self, name: str) -> ParameterProbe:
        """The numbers of the (first) parameter called *name*; ``KeyError`` if none."""
        for probe in self.parameters:
            if probe.name == name:
                return probe
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        """The probe's numbers and findings as JSON values (not the audit report's schema)."""
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
                f"{printable(p.name):<40} {'y' if p.requires_grad else 'n':>2} {'y' if p.in_optimizer else 'n':>3} "
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


@checked_call
def run_probe(
    net: Any,
    optimizer: Any,
    loss_fn: Any,
    data: Any,
    label: Any,
    *,
    parameter_nodes: dict[int, str] | None = None,
    is_frozen: Callable[[str], bool] | None = None,
    training: bool | None = None,
    config: Any = None,
) -> ProbeResult:
    """Run one real training step of *net* and confirm from the numbers what trains.

    *data* are the network's inputs (a tuple, passed positionally, or one tensor) and *label*
    the loss's second argument: the step is ``loss_fn(net(*data), label)``, its gradients
    with respect to the optimizer's parameters (and every other trainable parameter, to
    report them), then ``optimizer(grads)``, run in PyNative mode. *parameter_nodes* maps
    ``id(Parameter)`` to a graph node id (``Structure.parameter_nodes``); without it nodes
    are ``param:<name>``. *is_frozen* (e.g. ``spec.is_frozen``) turns GA905 into ``info`` for
    a parameter the design declares frozen. *training* forces the network's training mode
    for the step (``None``: keep the mode it is in, as ``TrainOneStepCell`` does). What is
    reported follows the configuration as for :func:`graphaudit.audit` (``[tool.graphaudit]``
    or *config*); what it hides is in ``result.suppressed``.

    Everything is restored afterwards, bit for bit, on success and on failure.

    Raises:
        ProbeInputError: no loss, no label or no optimizer (an :class:`InputError`).
        ProbeStepError: the step raised (a :class:`ForwardError`; the cause is chained).
    """
    from graphaudit.evidence import AuditRequest, EvidenceSet
    from graphaudit.evidence.probe import ProbeStep
    from graphaudit.runner import configuration, judged

    settings = configuration(config, "run_probe()")
    net = check_step_arguments(net, optimizer, loss_fn, label)
    args = normalize_inputs(net, data)
    loss, probes = measure_step(
        net, optimizer, loss_fn, args, label, parameter_nodes=parameter_nodes, training=training
    )
    frozen = frozenset(p.name for p in probes if is_frozen is not None and is_frozen(p.name))
    step = ProbeStep(loss, tuple(probes), type(optimizer).__name__, frozen)
    # The step measured here is the probe's evidence; the request says nothing else (no
    # optimizer, no curve), so the checks read only the step, as they do inside audit().
    have = EvidenceSet(AuditRequest(net), {ProbeStep: step})
    report = judged(have, settings, [check for check in all_checks().values() if check.needs_probe])
    return ProbeResult(
        **{f.name: getattr(report, f.name) for f in dataclasses.fields(Report)},
        loss=loss,
        parameters=list(probes),
        optimizer=type(optimizer).__name__,
    )

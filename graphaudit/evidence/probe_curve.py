"""Several real training steps on one batch, as curves (``audit(..., probe=5, inputs=(x,), label=y)``).

The same measurement as :class:`~graphaudit.evidence.probe.ProbeStep` (one run, made once),
seen step by step: the loss curve, and per parameter ‖w‖, ‖Δw‖ and the gradient's norm at
every step. It is there only when ``probe=N`` asks for two steps or more: the checks that
read it (overfitting one batch, the update-to-weight ratio, gradients through the depth, the
loss scale) need a curve, not a point.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.Dense(3, 2)
    >>> x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.zeros((2, 2), np.float32))
    >>> request = AuditRequest(net, optimizer=nn.SGD(net.trainable_params(), 0.1), loss_fn=nn.MSELoss(),
    ...                        inputs=(x,), label=y, probe=3)
    >>> curve = EvidenceSet(request).need(ProbeCurve)
    >>> len(curve.losses), curve.losses[0] > curve.losses[-1]
    (3, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.probe import ProbeStep

if TYPE_CHECKING:
    from graphaudit.capture.training.loss_scale import GradientScaling
    from graphaudit.capture.training.probe_steps import ParameterProbe, StepRecord

__all__ = ["MIN_STEPS", "ProbeCurve"]

#: The fewest steps that make a curve.
MIN_STEPS = 2


@dataclass(frozen=True)
class ProbeCurve(Evidence):
    """Every step of ``probe=N``; ``parameters`` in the order of each step's tuples."""

    title = "several real training steps on one batch"
    requirement = Requirement(
        "pass probe=5 (N >= 2 real steps on the batch) with inputs=(x, ...), label=y, a loss and an optimizer",
        "give --probe 5 (N >= 2 steps) with --input, --label, a loss and an optimizer",
    )
    needs = (ProbeStep,)

    steps: tuple[StepRecord, ...]
    parameters: tuple[ParameterProbe, ...]
    scaling: GradientScaling | None = None
    requested: int = 2

    @property
    def applied(self) -> tuple[StepRecord, ...]:
        """The steps whose update ran."""
        return tuple(s for s in self.steps if s.applied)

    @property
    def losses(self) -> tuple[float, ...]:
        """The loss of every step, in order."""
        return tuple(s.loss for s in self.steps)

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ProbeCurve | Missing:
        if request.probe < MIN_STEPS:
            return Missing()
        step = have.need(ProbeStep)
        return cls(step.steps, step.parameters, step.scaling, request.probe)

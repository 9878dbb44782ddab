"""Real training steps, measured (``audit(..., probe=True, inputs=(x,), label=y)``, or ``probe=N``).

The numbers of :func:`graphaudit.capture.training.probe_steps.measure_steps` for every parameter of the
network and of the optimizer: whether the (first updating) step changed it, by how much in
the forward pass and in the optimizer step, and its gradient's norm, maximum and NaN/Inf
counts; with ``probe=N``, one :class:`~graphaudit.capture.training.probe_steps.StepRecord` per step (the
loss curve, ‖Δw‖/‖w‖, gradient norms, the loss scale). The GA9xx checks judge them;
everything the steps changed has been put back by the time they run.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.Dense(3, 2)
    >>> x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.zeros((2, 2), np.float32))
    >>> request = AuditRequest(net, optimizer=nn.SGD(net.trainable_params(), 0.1), loss_fn=nn.MSELoss(),
    ...                        inputs=(x,), label=y, probe=1)
    >>> step = EvidenceSet(request).need(ProbeStep)
    >>> step.optimizer, [p.changed for p in step.parameters]
    ('SGD', [True, True])
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.trace import TracedPass

if TYPE_CHECKING:
    from graphaudit.capture.training.loss_scale import GradientScaling
    from graphaudit.capture.training.probe_steps import ParameterProbe, StepRecord

__all__ = ["ProbeStep"]


@dataclass(frozen=True)
class ProbeStep(Evidence):
    """The loss of the first step, one :class:`~graphaudit.capture.training.probe_steps.ParameterProbe` per parameter.

    ``declared_frozen`` holds the names of the parameters the design declares frozen;
    ``steps`` one record per step run (more than asked when a loss scale skipped some),
    their tuples in the order of ``parameters``; ``scaling`` how the setup scales its
    gradients (``None`` without a train-step cell); ``requested`` the N of ``probe=N``.
    """

    title = "one real training step"
    requirement = Requirement(
        "pass probe=True with inputs=(x, ...), label=y, a loss and an optimizer",
        "give --probe with --input, --label, a loss and an optimizer",
    )
    needs = (TracedPass,)  # the batch: the step runs on the inputs that were traced

    loss: float
    parameters: tuple[ParameterProbe, ...]
    optimizer: str
    declared_frozen: frozenset[str] = field(default=frozenset())
    steps: tuple[StepRecord, ...] = ()
    scaling: GradientScaling | None = None
    requested: int = 1

    @property
    def applied_steps(self) -> int:
        """How many steps updated the weights (a loss scale skips the steps that overflow)."""
        return sum(1 for s in self.steps if s.applied) if self.steps else 1

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ProbeStep | Missing:
        if not request.probe:
            return Missing()
        from graphaudit.capture.training.probe_steps import measure_steps

        network = have.need(NetworkGraph)
        unfit = _label_unfit(request, network.output)
        if unfit:
            return Missing(unfit)
        if network.loss is not None and network.loss.refused is not None:
            return Missing(
                f"the loss {type(request.loss_fn).__name__} refused the label ({network.loss.refused}): "
                "no training step can run on it (GA060)"
            )
        measured = measure_steps(
            request.net,
            request.optimizer,
            request.loss_fn,
            request.inputs,
            request.label,
            steps=request.probe,
            parameter_nodes=network.structure.parameter_nodes,
            returns_loss=request.loss_inside,
            given=request.given,
        )
        probes = measured.parameters
        graph = network.graph
        probes = [
            dataclasses.replace(p, path=graph.nodes[p.node].get("path", "")) if p.node in graph else p
            for p in probes
        ]
        spec = request.spec
        frozen = frozenset(p.name for p in probes if spec is not None and spec.is_frozen(p.name))
        return cls(
            measured.loss,
            tuple(probes),
            type(request.optimizer).__name__,
            frozen,
            measured.steps,
            measured.scaling,
            request.probe,
        )


def _label_unfit(request: AuditRequest, output: Any) -> str | None:
    """Why the step must not run on this label (GA052 reports the label itself)."""
    from graphaudit.capture.training.loss import unheld_label

    if request.loss_inside or request.label is None or isinstance(request.label, (tuple, list)):
        return None
    reason = unheld_label(output, request.label)
    return (
        None
        if reason is None
        else f"{reason}, and a loss given them reads out of bounds: fix the label (GA052) first"
    )

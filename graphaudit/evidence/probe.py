"""One real training step, measured (``audit(..., probe=True, inputs=(x,), label=y)``).

The numbers of :func:`graphaudit.capture.step.measure_step` for every parameter of the
network and of the optimizer: whether it changed, by how much in the forward pass and in
the optimizer step, and its gradient's norm, maximum and NaN/Inf counts. The GA9xx checks
judge them; everything the step changed has been put back by the time they run.

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
from typing import TYPE_CHECKING

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.trace import TracedPass

if TYPE_CHECKING:
    from graphaudit.capture.step import ParameterProbe

__all__ = ["ProbeStep"]


@dataclass(frozen=True)
class ProbeStep(Evidence):
    """The loss of the step, one :class:`~graphaudit.capture.step.ParameterProbe` per parameter.

    ``declared_frozen`` holds the names of the parameters the design declares frozen.
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

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> ProbeStep | Missing:
        if not request.probe:
            return Missing()
        from graphaudit.capture.step import measure_step

        network = have.need(NetworkGraph)
        loss, probes = measure_step(
            request.net,
            request.optimizer,
            request.loss_fn,
            request.inputs,
            request.label,
            parameter_nodes=network.structure.parameter_nodes,
            returns_loss=request.loss_inside,
        )
        graph = network.graph
        probes = [
            dataclasses.replace(p, path=graph.nodes[p.node].get("path", "")) if p.node in graph else p
            for p in probes
        ]
        spec = request.spec
        frozen = frozenset(p.name for p in probes if spec is not None and spec.is_frozen(p.name))
        return cls(loss, tuple(probes), type(request.optimizer).__name__, frozen)

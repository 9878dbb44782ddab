"""The optimizer: which parameters it updates, with what weight decay.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.Dense(3, 2)
    >>> view = EvidenceSet(AuditRequest(net, optimizer=nn.SGD(net.trainable_params()))).need(OptimizerView)
    >>> view.holds(net.weight), [p.name for p in view.parameters]
    (True, ['weight', 'bias'])
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement

if TYPE_CHECKING:
    from graphaudit.capture.training.optimizer import OptimizerEntry

__all__ = ["OptimizerView"]


@dataclass(frozen=True)
class OptimizerView(Evidence):
    """The optimizer object and one :class:`~graphaudit.capture.training.optimizer.OptimizerEntry` per parameter it updates."""

    title = "the optimizer"
    requirement = Requirement(
        "pass the optimizer: audit(net, optimizer), or a TrainOneStepCell or Model holding it",
        "give --optimizer MODULE:FACTORY, or a factory that returns (net, optimizer)",
    )

    optimizer: Any
    entries: tuple[OptimizerEntry, ...]

    @property
    def parameters(self) -> list[Any]:
        """The parameters the optimizer updates, in its order."""
        return [entry.parameter for entry in self.entries]

    @functools.cached_property
    def _ids(self) -> frozenset[int]:
        ids = {id(p) for p in self.parameters}
        # a lazily initialised parameter is held by the optimizer through its twin
        ids |= {id(p.inited_param) for p in self.parameters if getattr(p, "inited_param", None)}
        return frozenset(ids)

    @functools.cached_property
    def state_names(self) -> frozenset[str]:
        """The names of the optimizer's own state parameters (moments, step counters...)."""
        from graphaudit.capture.training.optimizer import optimizer_state_parameters

        return frozenset(p.name for p in optimizer_state_parameters(self.optimizer))

    def holds(self, param: Any) -> bool:
        """Whether the optimizer updates *param*."""
        return id(param) in self._ids

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> OptimizerView | Missing:
        if request.optimizer is None:
            return Missing()
        from graphaudit.capture.training.optimizer import optimizer_entries

        return cls(request.optimizer, tuple(optimizer_entries(request.optimizer)))

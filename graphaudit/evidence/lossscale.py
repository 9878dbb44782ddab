"""How the training setup scales its gradients (GA705, GA706, and the probe's loss-scaled steps).

Read from the train-step cell the setup was given as (``nn.TrainOneStepCell`` and its
``sens``, ``nn.TrainOneStepWithLossScaleCell`` and its ``scale_sense``, or the train network
a ``mindspore.train.Model`` built from its ``loss_scale_manager``) and the optimizer's
``loss_scale``: see :mod:`graphaudit.capture.training.loss_scale`. Nothing runs.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.Dense(2, 2)
    >>> optimizer = nn.SGD(net.trainable_params(), loss_scale=1024.0)
    >>> step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer, sens=1024.0)
    >>> setup = EvidenceSet(AuditRequest(net, given=step, optimizer=optimizer)).need(LossScaleSetup)
    >>> setup.scaling.effective_factor
    1.0
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement

if TYPE_CHECKING:
    from graphaudit.capture.training.loss_scale import GradientScaling

__all__ = ["LossScaleSetup"]


@dataclass(frozen=True)
class LossScaleSetup(Evidence):
    """The train-step cell's gradient scaling and the optimizer's ``loss_scale``."""

    title = "the training step the setup trains with"
    requirement = Requirement(
        "pass the training step itself: a TrainOneStepCell / TrainOneStepWithLossScaleCell, or a Model",
        "give a factory returning the TrainOneStepCell or Model the training uses",
    )

    scaling: GradientScaling

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> LossScaleSetup | Missing:
        from graphaudit.capture.training.loss_scale import gradient_scaling

        scaling = gradient_scaling(request.given, request.optimizer)
        return Missing() if scaling is None else cls(scaling)

"""What the network is about to be used for: training or inference (``mode=``).

``audit(..., mode="train")`` or ``mode="eval"``; an optimizer implies ``"train"``. The
train/eval checks (GA501, GA503) judge the BatchNorm and Dropout cells against it.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> EvidenceSet(AuditRequest(nn.Dense(2, 2), mode="eval")).need(IntendedMode).mode
    'eval'
"""

from __future__ import annotations

from dataclasses import dataclass

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement

__all__ = ["IntendedMode"]


@dataclass(frozen=True)
class IntendedMode(Evidence):
    """``"train"`` or ``"eval"``."""

    title = "what the network is audited for (training or inference)"
    requirement = Requirement(
        'pass mode="train" or mode="eval" (an optimizer implies mode="train")',
        "give --mode train|eval (an optimizer implies train)",
    )

    mode: str

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> IntendedMode | Missing:
        return Missing() if request.mode is None else cls(request.mode)

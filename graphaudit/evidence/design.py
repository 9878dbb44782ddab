"""The declared design: what the network must share, freeze, connect and call (``spec=``).

Example:
    >>> from mindspore import nn
    >>> from graphaudit import Spec
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> have = EvidenceSet(AuditRequest(nn.Dense(3, 2), spec=Spec(frozen=["weight"])))
    >>> have.need(DeclaredDesign).spec.frozen
    ['weight']
"""

from __future__ import annotations

from dataclasses import dataclass

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.spec import Spec

__all__ = ["DeclaredDesign"]


@dataclass(frozen=True)
class DeclaredDesign(Evidence):
    """The :class:`~graphaudit.spec.Spec` the user declared."""

    title = "a declared design"
    requirement = Requirement(
        "pass spec=graphaudit.Spec(...) or spec=graphaudit.Spec.load('design.toml')",
        "give --spec design.toml",
    )

    spec: Spec

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> DeclaredDesign | Missing:
        return Missing() if request.spec is None else cls(request.spec)

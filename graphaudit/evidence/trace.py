"""One real forward pass of the network, traced (``audit(..., inputs=...)``).

The capture of :class:`~graphaudit.evidence.network.NetworkGraph` runs it; this kind says
that it ran and keeps its output, for the checks that read the data flow (GA3xx, GA4xx...).

Example:
    >>> import numpy as np
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> x = Tensor(np.ones((1, 3), np.float32))
    >>> EvidenceSet(AuditRequest(nn.Dense(3, 2), inputs=(x,))).need(TracedPass).output.shape
    (1, 2)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph

__all__ = ["TracedPass"]


@dataclass(frozen=True)
class TracedPass(Evidence):
    """The inputs and the output of the traced forward pass (the graph holds what happened)."""

    title = "a traced forward pass"
    requirement = Requirement(
        "pass inputs=(x, ...): one batch, as construct() takes it",
        "give --input SHAPE[:DTYPE] for each construct() argument",
    )
    needs = (NetworkGraph,)

    inputs: tuple[Any, ...]
    output: Any

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> TracedPass | Missing:
        if request.inputs is None:
            return Missing()
        return cls(request.inputs, have.need(NetworkGraph).output)

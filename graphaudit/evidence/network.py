"""The network itself: its captured graph and the objects behind the graph's nodes.

Always there. With ``inputs`` the one capture also traces the forward pass
(:class:`~graphaudit.evidence.trace.TracedPass` reads what it recorded) and, given a loss,
the loss on its output (:class:`~graphaudit.evidence.loss.LossTrace` reads it): an audit runs
the network's forward pass once, here.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> network = EvidenceSet(AuditRequest(nn.Dense(3, 2))).need(NetworkGraph)
    >>> sorted(network.structure.parameters)
    ['param:bias', 'param:weight']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Requirement

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.capture.network.structure import Structure
    from graphaudit.capture.training.loss import TracedLoss

__all__ = ["NetworkGraph"]


@dataclass(frozen=True)
class NetworkGraph(Evidence):
    """The graph of :func:`graphaudit.to_networkx`, the objects of its nodes, the traced output."""

    title = "the network's structure"
    requirement = Requirement("pass the network", "give MODULE:FACTORY")
    always = True  # the subject of every audit: served to every check and producer undeclared

    graph: nx.MultiDiGraph
    structure: Structure
    output: Any = None
    loss: TracedLoss | None = None  # the loss given apart, traced in the same session on the output

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> NetworkGraph:
        from graphaudit.capture import capture

        # A loss the network calls itself is traced there, its body included; a loss given
        # apart is traced on the output.
        loss_fn, inside = request.loss_fn, request.loss_inside
        expand = (loss_fn,) if inside and loss_fn is not None else ()
        loss = (loss_fn, request.label) if loss_fn is not None and not inside else None
        return cls(*capture(request.net, request.inputs, expand=expand, loss=loss))

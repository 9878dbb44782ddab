"""The network itself: its captured graph and the objects behind the graph's nodes.

Always there. With ``inputs`` the one capture also traces the forward pass
(:class:`~graphaudit.evidence.trace.TracedPass` reads what it recorded): an audit runs the
network's forward pass once, here.

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

    from graphaudit.capture.structure import Structure

__all__ = ["NetworkGraph"]


@dataclass(frozen=True)
class NetworkGraph(Evidence):
    """The graph of :func:`graphaudit.to_networkx`, the objects of its nodes, the traced output."""

    title = "the network's structure"
    requirement = Requirement("pass the network", "give MODULE:FACTORY")

    graph: nx.MultiDiGraph
    structure: Structure
    output: Any = None

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> NetworkGraph:
        from graphaudit.capture import capture

        # A loss the network calls itself is traced there, its body included.
        expand = (request.loss_fn,) if request.loss_inside and request.loss_fn is not None else ()
        graph, structure, output = capture(request.net, request.inputs, expand=expand)
        return cls(graph, structure, output)

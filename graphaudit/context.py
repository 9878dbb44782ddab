"""What every check gets: the graph, the objects behind it, the optimizer, loss and design.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.Dense(3, 2)
    >>> ctx = AuditContext.build(net, nn.SGD(net.trainable_params()))
    >>> [p.name for p in ctx.optimizer_parameters]
    ['weight', 'bias']
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field
from typing import Any

import networkx as nx
from mindspore import Parameter, nn

from graphaudit import graph as g
from graphaudit.capture import capture
from graphaudit.capture.structure import Structure
from graphaudit.findings import Finding, Severity
from graphaudit.spec import Spec

__all__ = ["AuditContext", "OptimizerEntry"]


@dataclass(frozen=True)
class OptimizerEntry:
    """One parameter as the optimizer holds it, with the weight decay applied to it.

    ``weight_decay`` is ``nan`` when it is a schedule (a Cell) whose value is not fixed.
    """

    parameter: Parameter
    weight_decay: float


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def _optimizer_entries(optimizer: nn.Optimizer) -> list[OptimizerEntry]:
    params = list(optimizer.parameters)
    decay_flags = list(getattr(optimizer, "decay_flags", ()) or ())
    if getattr(optimizer, "is_group", False):
        decays = [_as_float(v) for v in getattr(optimizer, "group_weight_decay", [])]
    else:
        decays = [_as_float(getattr(optimizer, "weight_decay", 0.0))] * len(params)
    entries = []
    for index, param in enumerate(params):
        decay = decays[index] if index < len(decays) else 0.0
        if index < len(decay_flags) and not decay_flags[index]:
            decay = 0.0  # the optimizer's decay_filter excluded this parameter
        entries.append(OptimizerEntry(param, decay))
    return entries


@dataclass
class AuditContext:
    """The input of every check (see :mod:`graphaudit.checks`)."""

    graph: nx.MultiDiGraph
    net: nn.Cell
    structure: Structure
    optimizer: nn.Optimizer | None = None
    loss_fn: nn.Cell | None = None
    spec: Spec = field(default_factory=Spec)
    traced: bool = False
    loss_graph: nx.MultiDiGraph | None = None
    optimizer_entries: list[OptimizerEntry] = field(default_factory=list)
    mode: str | None = None
    current_check: tuple[str, str] = ("", "")
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def build(
        cls,
        net: nn.Cell,
        optimizer: nn.Optimizer | None = None,
        *,
        inputs: Any = None,
        loss_fn: nn.Cell | None = None,
        spec: Spec | None = None,
        mode: str | None = None,
        graph: nx.MultiDiGraph | None = None,
        structure: Structure | None = None,
    ) -> AuditContext:
        if graph is None or structure is None:
            graph, structure, _ = capture(net, inputs)
        return cls(
            graph=graph,
            net=net,
            structure=structure,
            optimizer=optimizer,
            loss_fn=loss_fn,
            spec=spec if spec is not None else Spec(),
            mode=mode,
            traced=bool(graph.graph.get("traced")),
            optimizer_entries=_optimizer_entries(optimizer) if optimizer is not None else [],
        )

    # -- lookups shared by the checks --------------------------------------------------
    @property
    def optimizer_parameters(self) -> list[Parameter]:
        return [entry.parameter for entry in self.optimizer_entries]

    @functools.cached_property
    def _optimizer_ids(self) -> frozenset[int]:
        ids = {id(p) for p in self.optimizer_parameters}
        # a lazily initialised parameter is held by the optimizer through its twin
        ids |= {id(p.inited_param) for p in self.optimizer_parameters if getattr(p, "inited_param", None)}
        return frozenset(ids)

    def in_optimizer(self, param: Parameter) -> bool:
        """Whether the optimizer updates *param* (False when there is no optimizer)."""
        return id(param) in self._optimizer_ids

    def parameter_node(self, param: Parameter) -> str | None:
        """The graph node of a Parameter object, or None when the network does not hold it."""
        return self.structure.parameter_nodes.get(id(param))

    def parameters(self) -> list[tuple[str, Parameter]]:
        """``(node, Parameter)`` for every parameter the network registers, in graph order.

        Parameters met during the traced pass in cells the network does not register (held in
        a plain list) are left out: GA303 reports them, once, with their cause.
        """
        return [
            (node, self.structure.parameters[node])
            for node, attrs in g.nodes_of_kind(self.graph, g.PARAMETER)
            if attrs.get("registered", True)
        ]

    def cell_path(self, node: str) -> str:
        """A cell node's first path, ``(root)`` for the network itself."""
        return self.graph.nodes[node]["path"] or "(root)"

    def finding(
        self,
        severity: Severity,
        subject: str,
        message: str,
        fix: str,
        nodes: tuple[str, ...] | list[str] = (),
    ) -> Finding:
        """A finding of the check now running."""
        check_id, name = self.current_check
        return Finding(check_id, name, severity, subject, message, fix, tuple(nodes))

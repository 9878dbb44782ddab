"""What every check gets: a typed view of the audit's evidence, bound to the check.

A check reads the evidence it declared (``ctx.need(TracedPass)`` for a kind in its
``needs=``, ``ctx.get(DataSample)`` for one in its ``uses=``, ``None`` when absent), or the
shorthands for what nearly every check reads (``ctx.graph``, ``ctx.spec``,
``ctx.parameters()``...), and makes its findings with :meth:`AuditContext.finding`, which
stamps them with the check's ID and name. A context bound to a check serves it only what it
declares: any other kind (through a shorthand too: ``ctx.spec`` reads
:class:`~graphaudit.evidence.design.DeclaredDesign`, ``ctx.mode``
:class:`~graphaudit.evidence.mode.IntendedMode`, ``ctx.optimizer``
:class:`~graphaudit.evidence.optimizer.OptimizerView`) raises
:class:`~graphaudit.errors.UndeclaredEvidenceError`; the network (``ctx.graph``,
``ctx.net``) is always served. The audit request itself is not reachable from a check.
Work that several checks share (the loss pairing of GA401-GA404, say) is computed once per
audit with :meth:`AuditContext.shared`; a check that gets it must declare what it read.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.checks import all_checks
    >>> net = nn.Dense(3, 2)
    >>> ctx = AuditContext.build(net, nn.SGD(net.trainable_params()))
    >>> [p.name for p in ctx.optimizer_parameters]
    ['weight', 'bias']
    >>> all_checks()["GA201"](ctx)
    []
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, replace
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, TypeVar

from graphaudit import graph as g
from graphaudit.errors import InternalError
from graphaudit.evidence import REQUEST_KEYWORDS, AuditRequest, Evidence, EvidenceSet
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.loss import LossTrace
from graphaudit.evidence.mode import IntendedMode
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding, Severity
from graphaudit.spec import Spec

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.capture.network.structure import Structure
    from graphaudit.checks import Check

__all__ = ["AuditContext"]


def _no_design(ctx: AuditContext) -> Spec:
    """The design of an audit given none: declares nothing."""
    return Spec()


def _cell_nodes_by_path(ctx: AuditContext) -> Mapping[str, str]:
    return MappingProxyType(g.cell_nodes_by_path(ctx.graph))


E = TypeVar("E", bound=Evidence)
T = TypeVar("T")


@dataclass(frozen=True)
class AuditContext:
    """The input of every check: the evidence, and the check it is bound to (see the module docstring)."""

    evidence: EvidenceSet
    check: Check | None = None
    _shared: dict[Callable[..., Any], Any] = field(default_factory=dict, repr=False, compare=False)

    @classmethod
    def build(cls, net: Any, optimizer: Any = None, **keywords: Any) -> AuditContext:
        """A context for *net* as given, without the checks of ``audit()``'s front door (for tests and tools).

        *keywords* are those of :func:`graphaudit.audit` that make the request
        (:data:`~graphaudit.evidence.REQUEST_KEYWORDS`: ``inputs``, ``label``, ``loss_fn``,
        ``spec``, ``mode``...), and evidence options.
        """
        from graphaudit.capture.network.inputs import normalize_inputs

        made = {name: keywords.pop(name) for name in REQUEST_KEYWORDS if name in keywords}
        if made.get("inputs") is not None:
            made["inputs"] = normalize_inputs(net, made["inputs"])
        request = AuditRequest(net, net, **{"optimizer": optimizer, **made}, options=keywords)
        return cls(EvidenceSet(request))

    def bound(self, check: Check) -> AuditContext:
        """The same evidence, bound to *check*: its findings get its ID and name, it is served what it declares."""
        served = self.evidence.served(f"check {check.check_id} ({check.name})", check.needs, check.uses)
        return replace(self, evidence=served, check=check)

    def with_evidence(self, *evidence: Evidence) -> AuditContext:
        """A context in which *evidence* replaces what its kind would produce."""
        return replace(self, evidence=self.evidence.with_evidence(*evidence), _shared={})

    # -- evidence ----------------------------------------------------------------------
    def get(self, kind: type[E]) -> E | None:
        """The evidence of *kind* (declared in ``needs=`` or ``uses=``), or ``None`` when it is missing."""
        return self.evidence.get(kind)

    def need(self, kind: type[E]) -> E:
        """The evidence of *kind*, which the check declares in ``needs=`` (so it is there)."""
        return self.evidence.need(kind)

    def shared(self, compute: Callable[[AuditContext], T]) -> T:
        """``compute(self)``, computed once per audit and shared by every check that asks.

        Every check that gets it must declare the kinds it read (as if it had computed it).
        *compute* is known by identity, so it must be a module-level function: one defined inside
        the helper that asks is a new object at each call, and would be computed for every check.
        """
        if "<locals>" in getattr(compute, "__qualname__", ""):
            raise InternalError(
                f"AuditContext.shared({compute.__qualname__}): a function defined inside another is a new "
                "object at each call and would never be shared; define it at module level"
            )
        if compute not in self._shared:
            with self.evidence.recording() as read:
                value = compute(self)
            self._shared[compute] = (value, frozenset(read))
        value, read = self._shared[compute]
        for kind in read:
            self.evidence.check_served(kind)
        return value

    # -- shorthands for what nearly every check reads -----------------------------------
    @property
    def network(self) -> NetworkGraph:
        return self.need(NetworkGraph)

    @property
    def graph(self) -> nx.MultiDiGraph:
        return self.network.graph

    @property
    def structure(self) -> Structure:
        return self.network.structure

    @property
    def net(self) -> Any:
        """The network audited (the backbone found inside a wrapper): always served."""
        return self.evidence.subject

    @property
    def spec(self) -> Spec:
        """The declared design, or an empty one when none was given (one an audit: a Spec
        validates itself when made, ~15 us, and checks read this ~50 times an audit)."""
        design = self.get(DeclaredDesign)
        return design.spec if design is not None else self.shared(_no_design)

    @property
    def mode(self) -> str | None:
        """``"train"``, ``"eval"`` or ``None`` (not said): reads :class:`IntendedMode`."""
        intended = self.get(IntendedMode)
        return intended.mode if intended is not None else None

    @property
    def traced(self) -> bool:
        return self.get(TracedPass) is not None

    @property
    def optimizer(self) -> Any:
        view = self.get(OptimizerView)
        return view.optimizer if view is not None else None

    @property
    def optimizer_entries(self) -> tuple[Any, ...]:
        view = self.get(OptimizerView)
        return view.entries if view is not None else ()

    @property
    def optimizer_parameters(self) -> list[Any]:
        view = self.get(OptimizerView)
        return view.parameters if view is not None else []

    def in_optimizer(self, param: Any) -> bool:
        """Whether the optimizer updates *param* (False when there is no optimizer)."""
        view = self.get(OptimizerView)
        return view is not None and view.holds(param)

    @property
    def loss_fn(self) -> Any:
        """The loss cell, or ``None``: reads :class:`LossTrace`."""
        loss = self.get(LossTrace)
        return loss.loss_fn if loss is not None else None

    @property
    def loss_graph(self) -> nx.MultiDiGraph | None:
        loss = self.get(LossTrace)
        return loss.graph if loss is not None else None

    def cell_nodes_by_path(self) -> Mapping[str, str]:
        """Every path of every cell mapped to its node (:func:`graphaudit.graph.cell_nodes_by_path`),
        read-only, made once an audit: a dozen checks ask (each making cost ~0.6 ms on resnet50)."""
        return self.shared(_cell_nodes_by_path)

    def parameter_node(self, param: Any) -> str | None:
        """The graph node of a Parameter object, or None when the network does not hold it."""
        return self.structure.parameter_nodes.get(id(param))

    def parameters(self) -> list[tuple[str, Any]]:
        """``(node, Parameter)`` for every parameter the network registers, in graph order.

        Parameters met during the traced pass in cells the network does not register (held in
        a plain list) are left out: GA303 reports them, once, with their cause.
        """
        return [
            (node, self.structure.parameters[node])
            for node, attrs in g.nodes_of_kind(self.graph, g.PARAMETER)
            if attrs.get("registered", True)
        ]

    def subject_of(self, node: str) -> str:
        """What a finding about a parameter names it by: its attribute path, what a user greps for.

        ``Parameter.name`` (what checkpoints use) is often the same; when it is not (mindcv
        names ``stages.2.blocks.2.f.a.weight`` ``0.blocks.2.f.a.weight``), :meth:`named_as`
        says it. A parameter the network does not register has no path: its name is used.
        """
        attrs = self.graph.nodes[node]
        return attrs.get("path") or attrs["name"]

    def named_as(self, node: str) -> str:
        """`` (Parameter name 'x')`` when the parameter's name differs from its path, else ``""``."""
        attrs = self.graph.nodes[node]
        path, name = attrs.get("path"), attrs["name"]
        return f" (Parameter name {name!r})" if path and name != path else ""

    def cell_path(self, node: str) -> str:
        """A cell node's first path, ``(root)`` for the network itself."""
        return self.graph.nodes[node]["path"] or "(root)"

    # -- findings ----------------------------------------------------------------------
    def finding(
        self,
        severity: Severity,
        subject: str,
        cause: Cause,
        nodes: Iterable[str] = (),
        *,
        subjects: Iterable[str] = (),
    ) -> Finding:
        """A finding of the check this context is bound to, its message and fix rendered from *cause*."""
        if self.check is None:
            raise RuntimeError("ctx.finding() needs a context bound to a check: run checks with check(ctx)")
        if not isinstance(cause, Cause):
            raise TypeError(
                f"{self.check.check_id}: ctx.finding() takes the cause as data (a graphaudit.findings.Cause), "
                f"got {type(cause).__name__}"
            )
        return Finding(
            self.check.check_id,
            self.check.name,
            severity,
            subject,
            cause.message(),
            cause.fix(),
            tuple(nodes),
            tuple(subjects),
            cause=cause,
        )

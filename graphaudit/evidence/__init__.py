"""Typed evidence: what the pipeline learns about a network before any check runs.

The second stage of the pipeline (capture → evidence → checks → report/draw). Each kind of
evidence is a class deriving from :class:`Evidence`, defined in its own module of this
package together with the producer that makes it (:meth:`Evidence.produce`):

========================  ==========================================================
:class:`NetworkGraph`     the captured graph and the objects behind it (always)
:class:`TracedPass`       one traced forward pass (``inputs=``)
:class:`LossTrace`        the loss, traced on the network's output (``loss_fn=``)
:class:`OptimizerView`    the optimizer's parameters and their weight decay
:class:`DeclaredDesign`   the design the network must keep (``spec=``)
:class:`ParameterValues`  summaries of the initial weight values
:class:`ProbeStep`        one real training step, measured (``probe=True``)
:class:`RankFingerprints` the weights of every data-parallel rank (``peers=``/msrun)
========================  ==========================================================

A check declares the kinds it needs (:func:`graphaudit.checks.register`); the runner
skips it when one is missing and says why, with the kind's :class:`Requirement` worded for
Python and for the command line. Evidence is produced lazily, once per audit, by an
:class:`EvidenceSet`. A new kind is one new module here: its class (``title``,
``requirement``, ``needs``, ``uses``, the :class:`Option` keywords of ``audit()`` that feed
it) and its ``produce``; see ``docs/architecture.md``.

The declarations are enforced: a check, and a producer, is served only the kinds it
declares (:meth:`EvidenceSet.served`): ``needs`` (it is not run, or its kind is missing,
without them) and ``uses`` (optional: ``get`` returns ``None`` when absent). Reading any
other kind raises :class:`~graphaudit.errors.UndeclaredEvidenceError`. The network itself
(:class:`NetworkGraph`, ``always = True``) is served to every reader: it is never missing. Modules here import MindSpore only inside
``produce``, so that declarations (``graphaudit checks``) stay light.

Example:
    >>> from graphaudit.evidence import all_kinds
    >>> kinds = [kind.__name__ for kind in all_kinds()]
    >>> kinds.index("NetworkGraph") < kinds.index("TracedPass") < kinds.index("LossTrace")
    True
"""

from __future__ import annotations

import importlib
import pkgutil
from collections.abc import Callable, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, fields
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, TypeVar

from graphaudit.errors import GraphAuditError, InternalError, UndeclaredEvidenceError
from graphaudit.evidence._option import Option, boolean

if TYPE_CHECKING:
    from graphaudit.spec import Spec

__all__ = [
    "REQUEST_KEYWORDS",
    "AuditRequest",
    "Evidence",
    "EvidenceSet",
    "Missing",
    "Option",
    "Requirement",
    "all_kinds",
    "all_options",
    "boolean",
    "import_modules",
]

E = TypeVar("E", bound="Evidence")


@dataclass(frozen=True)
class Requirement:
    """How a user provides one kind of evidence, worded for each audience.

    Each is a phrase that says what to do ("pass inputs=(x, ...)", "give --input ..."):
    ``python`` for :func:`graphaudit.audit`, ``cli`` for ``graphaudit audit``.
    """

    python: str
    cli: str


@dataclass(frozen=True)
class Missing:
    """Evidence that is not there: ``reason`` says why when it was asked for and could not be made.

    ``reason`` is ``None`` when the user did not ask for it (no ``inputs``, no ``probe``...):
    the kind's :class:`Requirement` then says what to pass.
    """

    reason: str | None = None


#: Marks the fields of :class:`AuditRequest` that are keywords of ``audit()`` of the same name.
_KEYWORD = MappingProxyType({"audit_keyword": True})


@dataclass(frozen=True)
class AuditRequest:
    """What the user asked to audit, checked and unwrapped: the input of every producer.

    ``net`` is the network the checks look at (the backbone found inside a wrapper);
    ``given`` what was passed to ``audit()``; ``inputs`` its forward pass's positional
    arguments (normalised) and ``label`` the loss's target, both ``None`` when not given;
    ``probe`` the number of real training steps asked for (0: none); ``options`` the other
    keywords, each declared by an evidence kind (:class:`Option`); ``loss_inside``: the loss
    is a cell that ``net`` calls itself (a network-with-loss), traced there; ``unwrapped``:
    the training wrappers taken off to find ``net`` (:mod:`graphaudit.capture.training.unwrap`).
    """

    net: Any
    given: Any = None
    optimizer: Any = field(default=None, metadata=_KEYWORD)
    loss_fn: Any = field(default=None, metadata=_KEYWORD)
    inputs: tuple[Any, ...] | None = field(default=None, metadata=_KEYWORD)
    label: Any = field(default=None, metadata=_KEYWORD)
    spec: Spec | None = field(default=None, metadata=_KEYWORD)
    mode: str | None = field(default=None, metadata=_KEYWORD)
    probe: int = field(default=0, metadata=_KEYWORD)
    options: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    loss_inside: bool = False
    unwrapped: tuple[str, ...] = ()

    def option(self, name: str) -> Any:
        """The value of an evidence option (``peers``...), or its declared default when it was not given."""
        if name in self.options:
            return self.options[name]
        declared = all_options().get(name)  # a keyword the request carries but no kind declares: None
        return declared[1].default if declared is not None else None


#: The fixed ``audit()`` keywords that make the request, declared once, by the fields above
#: (``audit()``'s own signature is checked against them when the runner is imported).
REQUEST_KEYWORDS: tuple[str, ...] = tuple(
    f.name for f in fields(AuditRequest) if f.metadata.get("audit_keyword")
)


class Evidence:
    """Base class of every kind of evidence; a subclass is registered when it is defined.

    Subclasses are frozen dataclasses holding what they found, and say, as class attributes:
    ``title`` ("a traced forward pass"), ``requirement`` (what to pass to get it), ``needs``
    (the kinds their producer reads and cannot do without: the kind is missing without
    them), ``uses`` (the kinds it reads when they are there) and ``options`` (the
    ``audit()`` keywords that feed it). ``always``: the kind is never missing and is served
    to every reader without being declared (the network itself).
    """

    title: ClassVar[str] = ""
    requirement: ClassVar[Requirement] = Requirement("", "")
    needs: ClassVar[tuple[type[Evidence], ...]] = ()
    uses: ClassVar[tuple[type[Evidence], ...]] = ()
    options: ClassVar[tuple[Option, ...]] = ()
    always: ClassVar[bool] = False
    _registry: ClassVar[dict[str, type[Evidence]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if not cls.title:
            raise TypeError(f"evidence kind {cls.__name__} must say what it is: a `title` class attribute")
        key = f"{cls.__module__}.{cls.__qualname__}"
        clash = [k for k, other in Evidence._registry.items() if other.__name__ == cls.__name__ and k != key]
        if clash:
            raise TypeError(f"evidence kind {cls.__name__} is defined twice ({clash[0]} and {key})")
        Evidence._registry[key] = cls

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> Evidence | Missing:
        """Make this kind of evidence for *request*, reading the kinds it ``needs`` from *have*."""
        raise NotImplementedError(f"{cls.__name__}.produce")


#: The search paths whose modules :func:`import_modules` imported, by package: every audit asks for
#: every check and every kind, and walking the folders anew cost a third of a structure-only
#: audit (issue 40). A path added (a plugin's, the architecture page's walk-through) is walked.
_IMPORTED: dict[str, tuple[str, ...]] = {}


def import_modules(package: str, path: Iterable[str], wanted: Callable[[str], bool]) -> None:
    """Import every module of *package* (found on *path*) whose name is *wanted*, once per path."""
    paths = tuple(path)
    if _IMPORTED.get(package) == paths:
        return
    for module in pkgutil.iter_modules(paths):
        if wanted(module.name):
            importlib.import_module(f"{package}.{module.name}")
    _IMPORTED[package] = paths


#: :func:`all_kinds`'s order and :func:`all_options`' map, with the registry they were made from:
#: asked for by every option a producer reads (``request.option``), each walk of every kind cost
#: ~0.1 ms, a few ms an audit; a kind defined later (a plugin's) makes them anew.
_ORDERED: dict[str, tuple[tuple[tuple[str, type[Evidence]], ...], Any]] = {}


def _of_registry(name: str, make: Callable[[], Any]) -> Any:
    registry = tuple(Evidence._registry.items())
    cached = _ORDERED.get(name)
    if cached is None or cached[0] != registry:
        cached = _ORDERED[name] = (registry, make())
    return cached[1]


def all_kinds() -> list[type[Evidence]]:
    """Every kind of evidence, each after the kinds it needs (importing every module here first)."""
    import_modules(__name__, __path__, lambda name: not name.startswith("_"))
    return list(_of_registry("kinds", _ordered_kinds))


def _ordered_kinds() -> tuple[type[Evidence], ...]:
    ordered: dict[type[Evidence], None] = {}

    def visit(kind: type[Evidence], chain: tuple[str, ...]) -> None:
        if kind.__name__ in chain:
            raise TypeError(
                f"evidence kinds need each other in a loop: {' -> '.join((*chain, kind.__name__))}"
            )
        for need in (*kind.needs, *kind.uses):
            visit(need, (*chain, kind.__name__))
        ordered.setdefault(kind, None)

    for _, kind in sorted(Evidence._registry.items()):  # by module, whatever imported them first
        visit(kind, ())
    return tuple(ordered)


def all_options() -> dict[str, tuple[type[Evidence], Option]]:
    """Every ``audit()`` keyword declared by an evidence kind, with the kind it feeds."""
    kinds = all_kinds()
    return dict(_of_registry("options", lambda: _declared_options(kinds)))


def _declared_options(kinds: list[type[Evidence]]) -> dict[str, tuple[type[Evidence], Option]]:
    found: dict[str, tuple[type[Evidence], Option]] = {}
    for kind in kinds:
        for option in kind.options:
            if option.name in found:
                raise TypeError(f"the audit() option {option.name!r} is declared by two evidence kinds")
            found[option.name] = (kind, option)
    return found


class EvidenceSet:
    """The evidence of one audit, produced on first use and kept: each producer runs at most once.

    Example:
        >>> from mindspore import nn
        >>> from graphaudit.evidence import AuditRequest, EvidenceSet
        >>> from graphaudit.evidence.network import NetworkGraph
        >>> from graphaudit.evidence.trace import TracedPass
        >>> have = EvidenceSet(AuditRequest(nn.Dense(2, 2)))
        >>> have.get(NetworkGraph).graph.number_of_nodes(), have.get(TracedPass)
        (3, None)
        >>> have.missing(TracedPass)
        Missing(reason=None)
    """

    def __init__(
        self, request: AuditRequest, given: Mapping[type[Evidence], Evidence | Missing] = ()
    ) -> None:
        self._request = request
        self._made: dict[type[Evidence], Evidence | Missing] = dict(given)
        self._reader: str | None = None  # None: every kind is served (the runner, tools)
        self._needs: frozenset[type[Evidence]] = frozenset()
        self._uses: frozenset[type[Evidence]] = frozenset()
        self._recorders: list[set[type[Evidence]]] = []

    def served(
        self, reader: str, needs: Iterable[type[Evidence]], uses: Iterable[type[Evidence]] = ()
    ) -> EvidenceSet:
        """The same evidence (made once, shared), serving *reader* only the kinds it declares.

        Example:
            >>> from mindspore import nn
            >>> from graphaudit.evidence.trace import TracedPass
            >>> have = EvidenceSet(AuditRequest(nn.Dense(2, 2))).served("check GA000", (), uses=(TracedPass,))
            >>> have.get(TracedPass) is None
            True
            >>> from graphaudit.evidence.optimizer import OptimizerView
            >>> have.get(OptimizerView)
            Traceback (most recent call last):
            ...
            graphaudit.errors.UndeclaredEvidenceError: check GA000 read OptimizerView with get() but does not declare it in needs= or uses= (it declares: TracedPass). Declare it: needs=(OptimizerView,) when it cannot run without it, uses=(OptimizerView,) when it is optional.
        """
        view = EvidenceSet(self._request)
        view._made = self._made  # one audit's evidence: what one reader makes, every reader gets
        view._reader, view._needs, view._uses = reader, frozenset(needs), frozenset(uses)
        return view

    @property
    def request(self) -> AuditRequest:
        """The audit request: for the runner and tools; a check or a producer is not served it here.

        A producer gets the request as its first argument; what a check reads from the request
        is evidence it declares (:class:`~graphaudit.evidence.mode.IntendedMode`, say).
        """
        if self._reader is not None:
            raise UndeclaredEvidenceError(self._reader, "the audit request", (), how="request")
        return self._request

    @property
    def subject(self) -> Any:
        """The network audited (``request.net``): served to every reader, as the network is."""
        return self._request.net

    def check_served(self, kind: type[Evidence], how: str = "get") -> None:
        """Raise :class:`~graphaudit.errors.UndeclaredEvidenceError` unless *kind* is served here."""
        for recorder in self._recorders:
            recorder.add(kind)
        if self._reader is None or kind.always or kind in self._needs:
            return
        if how != "need" and kind in self._uses:
            return
        declared = tuple(sorted(k.__name__ for k in (*self._needs, *self._uses)))
        raise UndeclaredEvidenceError(self._reader, kind.__name__, declared, how=how)

    @contextmanager
    def recording(self) -> Iterator[set[type[Evidence]]]:
        """The kinds read here while the block runs (what a computation shared by readers reads)."""
        read: set[type[Evidence]] = set()
        self._recorders.append(read)
        try:
            yield read
        finally:
            self._recorders.pop()  # recordings nest (a shared computation asking for another)

    def _make(self, kind: type[Evidence]) -> Evidence | Missing:
        made = self._made.get(kind)
        if made is None:
            failed = [(need, self._make(need)) for need in kind.needs]
            failed = [(need, m) for need, m in failed if isinstance(m, Missing)]
            if failed:
                # What it is made from was not given (its requirement says what to pass), or was
                # asked for and could not be made: then that reason is this kind's too.
                made = next(
                    (
                        Missing(f"{need.title} could not be made: {m.reason}")
                        for need, m in failed
                        if m.reason
                    ),
                    Missing(),
                )
            else:
                try:
                    served = self.served(f"the producer of {kind.__name__}", kind.needs, kind.uses)
                    made = kind.produce(self._request, served)
                except GraphAuditError:
                    raise
                except Exception as err:
                    raise InternalError(
                        f"graphaudit failed while making {kind.title} ({kind.__name__}): "
                        f"{type(err).__name__}: {err}. This is a bug in graphaudit; please report it."
                    ) from err
            self._made[kind] = made
        return made

    def get(self, kind: type[E]) -> E | None:
        """The evidence of *kind*, or ``None`` when it is missing (a declared kind only)."""
        self.check_served(kind)
        made = self._make(kind)
        return None if isinstance(made, Missing) else made  # type: ignore[return-value]

    def need(self, kind: type[E]) -> E:
        """The evidence of *kind*, which the reader declares in ``needs`` (so it is there)."""
        if kind.always:
            # Served to every reader, so nothing to check or record: the network graph, read
            # thousands of times an audit (ctx.graph, ctx.structure), once made is a dict read.
            made = self._made.get(kind)
            if made is not None and not isinstance(made, Missing):
                return made  # type: ignore[return-value]
        self.check_served(kind, "need")
        made = self._make(kind)
        made = None if isinstance(made, Missing) else made
        if made is None:
            raise InternalError(f"{kind.__name__} is missing, but a check that needs it was run")
        return made

    def missing(self, kind: type[Evidence]) -> Missing | None:
        """Why *kind* is missing (a :class:`Missing`), or ``None`` when it is there."""
        self.check_served(kind)
        made = self._make(kind)
        return made if isinstance(made, Missing) else None

    def produced(self) -> Iterator[Evidence]:
        """The evidence made so far, in the order it was made."""
        return (made for made in self._made.values() if not isinstance(made, Missing))

    def with_evidence(self, *evidence: Evidence) -> EvidenceSet:
        """A copy in which *evidence* replaces what its kind would produce (for tests and tools)."""
        return EvidenceSet(self._request, {**self._made, **{type(e): e for e in evidence}})

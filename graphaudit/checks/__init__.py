"""The checks, and the contract every check declares.

Each check lives in its own module in this package, named after its ID
(``ga201_trainable_not_in_optimizer.py``), and registers one function with
:func:`register`, declaring:

- its ID (``GA`` + family digit + two digits) and kebab-case name;
- its default ``severity`` (what it reports in the common case, which its bad sample shows:
  what SARIF and the docs show) and, in ``also``, the other severities it can emit (the
  runner refuses any other);
- the kinds of evidence it ``needs`` (:mod:`graphaudit.evidence`): the runner skips the
  check, saying why in words for Python and for the command line, when one is missing;
- the kinds it ``uses`` when they are there (optional evidence: it runs without them, and
  ``ctx.get(Kind)`` returns ``None``). The check is served only what these two declare
  (the network is always served): reading any other kind raises
  :class:`~graphaudit.errors.UndeclaredEvidenceError`;
- ``confirms``: the ID of a check whose findings it finds again from other evidence (a probe
  step confirming a static finding), or several, tried in order. A finding of it that the
  other check's findings *cover* is folded into them (:mod:`graphaudit.runner.merge`): they
  get its ID in ``confirmed_by`` and its subjects, and keep the worse severity. Two checks
  that say the same cause (or cannot both be true on one network) are thus never both
  reported. ``covered_by`` says what covers a finding: ``"subjects"`` (the default: each of
  its subjects is a subject of theirs) or ``"cells"`` (each of its subjects is a cell that is,
  or holds, a subject of theirs; ``(root)`` holds every one). ``keeps_message`` says which
  message stays: ``"confirmed"`` (the default: theirs, with ``Confirmed by GAnnn (name).``)
  or ``"both"`` (theirs, then its own: a probe's numbers after a static finding).
  ``direction`` says which way a finding says its cause goes, when two checks of a fold can
  say opposite ways: a word for every finding of the check (GA908: ``"too large"``, the
  updates and so the rate), or, left empty, what each finding's cause says
  (:attr:`~graphaudit.findings.Cause.direction`: GA721's ``"too large"`` above its range,
  ``"too small"`` below). A finding is never folded into one that says the other way: both
  are kept;
- ``defers_to``: the checks that say a cause this check's findings would only repeat or
  muddle, each with why (``{"GA340": "the samples mix: what moves cannot be told apart"}``):
  when one of them reports, this check's findings that ``deferred_when`` says it covers are
  dropped (:func:`graphaudit.runner.merge.defer`): ``"reported"`` (the default: any finding of
  it, the whole network's), ``"subjects"`` or ``"cells"`` (as ``covered_by``). Unlike a fold,
  nothing of the deferred finding is kept: it would be read from evidence the other cause
  spoils. The knowledge lives in the declaration, never in a check's body;
- ``causes``: the classes of the causes its findings carry (frozen dataclasses of
  :class:`~graphaudit.findings.Cause`: the facts a finding's message and fix are rendered
  from, which JSON and SARIF carry and ``docs/checks.md`` lists); a finding of another
  cause is a bug;
- ``once``: when the check's finding cannot repeat for one cause (one finding per network,
  per loss, per optimizer...), why, in words (``"one finding per network: ..."``). Every other
  check reports one cause once however many cells or parameters it touches, its ``subjects``
  listing each (tests/test_one_cause_coverage.py holds every check to one of the two).

Its family is its ID digit's (:data:`FAMILIES`), or a range of IDs within it that is a
family of its own (:data:`FAMILY_RANGES`: the learning-rate schedules, the training watch).

The function gets an :class:`~graphaudit.checks.context.AuditContext` bound to the check and
yields :class:`~graphaudit.findings.Finding` records made with ``ctx.finding(...)``. It is a
pure function of the context: it changes nothing and keeps no state. Its docstring is its
documentation (``docs/checks.md`` is generated from it) and must have the sections *What it
does*, *Why is this bad*, *Example* and *Use instead*. Helpers that several checks share live
in :mod:`graphaudit.checks._shared`, never in a sibling check module. Check modules import
MindSpore only inside functions, so that the declarations load without it.

Example:
    >>> from graphaudit.checks import all_checks
    >>> check = all_checks()["GA201"]
    >>> check.name, check.severity, check.severities
    ('trainable-not-in-optimizer', 'error', ('error', 'info'))
    >>> [kind.__name__ for kind in check.needs]
    ['OptimizerView']
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field, fields, is_dataclass
from typing import TYPE_CHECKING, Literal

from graphaudit.checks.families import (
    FAMILIES,
    FAMILY_RANGES,
    PORT,
    SCHEDULES,
    WATCH,
    by_family,
    family_of,
    id_span,
)
from graphaudit.evidence import Evidence, import_modules
from graphaudit.findings import SEVERITIES, Cause, Finding, Severity, severity_rank

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = [
    "FAMILIES",
    "FAMILY_RANGES",
    "PORT",
    "REQUIRED_DOC_SECTIONS",
    "SCHEDULES",
    "WATCH",
    "Check",
    "all_checks",
    "by_family",
    "family_of",
    "find_check",
    "id_span",
    "register",
]

CheckFunction = Callable[["AuditContext"], Iterable[Finding]]
Coverage = Literal["subjects", "cells"]
KeptMessage = Literal["confirmed", "both"]
COVERAGES: tuple[Coverage, ...] = ("subjects", "cells")
Deferral = Literal["reported", "subjects", "cells"]
DEFERRALS: tuple[Deferral, ...] = ("reported", "subjects", "cells")
KEPT_MESSAGES: tuple[KeptMessage, ...] = ("confirmed", "both")

REQUIRED_DOC_SECTIONS = ("What it does", "Why is this bad", "Example", "Use instead")
_ID = re.compile(r"^GA[0-9]\d\d$")
_NAME = re.compile(r"^[a-z]+(-[a-z0-9]+)*$")
_REGISTRY: dict[str, Check] = {}


@dataclass(frozen=True)
class Check:
    """A registered check: its declaration and its function (see the module docstring)."""

    check_id: str
    name: str
    severity: Severity
    run: CheckFunction
    also: tuple[Severity, ...] = ()
    needs: tuple[type[Evidence], ...] = ()
    confirms: tuple[str, ...] = ()  # the checks whose findings it confirms, tried in order
    module: str = field(default="", compare=False)
    uses: tuple[type[Evidence], ...] = ()
    once: str = ""  # why one cause cannot give several findings of it, when it cannot
    covered_by: Coverage = "subjects"  # when a finding of a confirmed check covers one of it
    keeps_message: KeptMessage = "confirmed"  # which message a folded finding leaves
    direction: str = field(default="", compare=False)  # which way all its findings say the cause goes
    causes: tuple[type[Cause], ...] = field(default=(), compare=False)  # what its findings' causes are
    defers_to: tuple[tuple[str, str], ...] = ()  # (check ID, why) of the checks it stays silent for
    deferred_when: Deferral = "reported"  # which of its findings a finding of those silences

    def direction_of(self, finding: Finding) -> str:
        """Which way *finding* (of this check) says its cause goes: the check's word, else its cause's.

        Example:
            >>> all_checks()["GA908"].direction_of(None), all_checks()["GA201"].direction_of(None)
            ('too large', '')
        """
        if self.direction or finding is None or finding.cause is None:
            return self.direction
        return finding.cause.direction

    @property
    def severities(self) -> tuple[Severity, ...]:
        """Every severity the check can report, the worst first."""
        return tuple(sorted({self.severity, *self.also}, key=severity_rank))

    @property
    def family(self) -> str:
        return family_of(self.check_id)[1]

    @property
    def family_key(self) -> str:
        """The family's key: its digit (``"2"``), or its ID range (``"950-979"``)."""
        return family_of(self.check_id)[0]

    @property
    def doc(self) -> str:
        return self.run.__doc__ or ""

    @property
    def summary(self) -> str:
        """The first line of the documentation: what the check finds."""
        return self.doc.strip().partition("\n")[0].strip()

    @property
    def needs_inputs(self) -> bool:
        """Whether the check reads a traced forward pass (directly or through what it needs)."""
        return any(_reads(kind, "TracedPass") for kind in self.needs)

    @property
    def needs_probe(self) -> bool:
        """Whether the check reads a real training step (``probe=True``)."""
        return any(_reads(kind, "ProbeStep") for kind in self.needs)

    def __call__(self, ctx: AuditContext) -> list[Finding]:
        """Run the check on *ctx* (bound to it); a finding of an undeclared severity is a bug."""
        bound = ctx.bound(self)
        found = list(self.run(bound))
        for finding in found:
            if finding.severity not in self.severities:
                raise ValueError(
                    f"{self.check_id} reported a {finding.severity} finding but declares only "
                    f"{', '.join(self.severities)}: declare it with register(..., also=(...))"
                )
            if not isinstance(finding.cause, self.causes):
                raise TypeError(
                    f"{self.check_id} reported a finding whose cause is a {type(finding.cause).__name__}, "
                    f"but declares {', '.join(c.__name__ for c in self.causes) or 'none'}: "
                    "declare it with register(..., causes=(...))"
                )
        return found


def _reads(kind: type[Evidence], name: str) -> bool:
    return kind.__name__ == name or any(_reads(need, name) for need in kind.needs)


def register(
    check_id: str,
    name: str,
    *,
    severity: Severity,
    also: Iterable[Severity] = (),
    needs: Iterable[type[Evidence]] = (),
    uses: Iterable[type[Evidence]] = (),
    confirms: str | Iterable[str] = (),
    covered_by: Coverage = "subjects",
    keeps_message: KeptMessage = "confirmed",
    direction: str = "",
    once: str = "",
    causes: Iterable[type[Cause]] = (),
    defers_to: Mapping[str, str] | None = None,
    deferred_when: Deferral = "reported",
) -> Callable[[CheckFunction], CheckFunction]:
    """Register the decorated function as check *check_id* called *name*; see the module docstring.

    ``confirms`` (one ID or several, tried in order), ``covered_by`` and ``keeps_message``
    declare how its findings fold into those of the checks it confirms: with
    ``confirms="GA721", keeps_message="both"``, a finding of it about parameters that a GA721
    finding lists becomes part of that finding (the worse severity, GA721's message then its
    own, its ID in ``confirmed_by``); with ``covered_by="cells"`` a finding about ``backbone``
    is covered by one about ``backbone.0.1``. A chain folds from its far end (GA907 into GA908,
    then GA908 into GA721); a finding that no finding of those checks covers stays its own.
    ``direction`` (a word; left empty, each finding's cause says it) keeps apart findings that
    say opposite ways: GA908's ``"too large"`` never folds into a GA721 finding whose rate is
    ``"too small"``.

    Raises ``ValueError`` at import when the declaration is malformed or *check_id* is
    already used by another module.
    """
    needs, uses, causes = tuple(needs), tuple(uses), tuple(causes)
    deferrals = tuple((defers_to or {}).items())
    confirmed = (confirms,) if isinstance(confirms, str) else tuple(confirms)

    def decorate(run: CheckFunction) -> CheckFunction:
        if not _ID.match(check_id):
            raise ValueError(f"check id {check_id!r} must look like GA101 (GA, family digit 0-9, two digits)")
        if check_id[2] not in FAMILIES:
            raise ValueError(f"check id {check_id!r} is in no family; the families are {sorted(FAMILIES)}")
        if not _NAME.match(name):
            raise ValueError(f"check name {name!r} must be kebab-case")
        for declared in (severity, *also):
            if declared not in SEVERITIES:
                raise ValueError(f"{check_id}: severity {declared!r} is not one of {SEVERITIES}")
        for keyword, kinds in (("needs", needs), ("uses", uses)):
            for kind in kinds:
                if not (isinstance(kind, type) and issubclass(kind, Evidence)):
                    raise ValueError(
                        f"{check_id}: {keyword}= takes evidence kinds (graphaudit.evidence), got {kind!r}"
                    )
        both = set(needs) & set(uses)
        if both:
            raise ValueError(
                f"{check_id}: {', '.join(sorted(k.__name__ for k in both))} is declared in needs= and uses=: "
                "a kind is either required or optional"
            )
        for target in confirmed:
            if not _ID.match(target) or target == check_id:
                raise ValueError(f"{check_id}: confirms= takes the IDs of other checks, got {target!r}")
        if covered_by not in COVERAGES:
            raise ValueError(f"{check_id}: covered_by= is one of {COVERAGES}, got {covered_by!r}")
        if keeps_message not in KEPT_MESSAGES:
            raise ValueError(f"{check_id}: keeps_message= is one of {KEPT_MESSAGES}, got {keeps_message!r}")
        if not confirmed and (covered_by, keeps_message) != ("subjects", "confirmed"):
            raise ValueError(
                f"{check_id}: covered_by= and keeps_message= say how it folds into what it confirms="
            )
        if not isinstance(direction, str):
            raise ValueError(
                f"{check_id}: direction= is a word (or empty: each finding's cause says it), got {direction!r}"
            )
        if once and not once.startswith("one finding per "):
            raise ValueError(
                f"{check_id}: once= says why its finding cannot repeat: 'one finding per ...: why'"
            )
        for target, why in deferrals:
            if not _ID.match(target) or target == check_id or not (isinstance(why, str) and why):
                raise ValueError(
                    f"{check_id}: defers_to= maps the IDs of other checks to why it stays silent for them, "
                    f"got {target!r}: {why!r}"
                )
        if deferred_when not in DEFERRALS:
            raise ValueError(f"{check_id}: deferred_when= is one of {DEFERRALS}, got {deferred_when!r}")
        if not deferrals and deferred_when != "reported":
            raise ValueError(
                f"{check_id}: deferred_when= says which findings the checks of defers_to= silence"
            )
        for cause in causes:
            if not (isinstance(cause, type) and issubclass(cause, Cause) and is_dataclass(cause)):
                raise ValueError(
                    f"{check_id}: causes= takes frozen dataclasses of graphaudit.findings.Cause, got {cause!r}"
                )
            if "kind" in {f.name for f in fields(cause)}:  # JSON's "kind" names the cause's class
                raise ValueError(
                    f"{check_id}: {cause.__name__} has a field 'kind', which its JSON uses for its class"
                )
        missing = [s for s in REQUIRED_DOC_SECTIONS if s not in (run.__doc__ or "")]
        if missing:
            raise ValueError(f"the docstring of check {check_id} lacks the sections {missing}")
        existing = _REGISTRY.get(check_id)
        if existing is not None and existing.module != run.__module__:
            raise ValueError(
                f"check id {check_id} is used twice: by {existing.module} ({existing.name}) and by "
                f"{run.__module__} ({name})"
            )
        _REGISTRY[check_id] = Check(
            check_id,
            name,
            severity,
            run,
            also=tuple(also),
            needs=tuple(needs),
            confirms=confirmed,
            module=run.__module__,
            uses=tuple(uses),
            once=once,
            covered_by=covered_by,
            keeps_message=keeps_message,
            direction=direction,
            causes=causes,
            defers_to=deferrals,
            deferred_when=deferred_when,
        )
        return run

    return decorate


def all_checks() -> dict[str, Check]:
    """Every check, by ID, in ID order (importing every check module first, once per search path)."""
    import_modules(__name__, __path__, lambda name: name.startswith("ga"))
    return dict(sorted(_REGISTRY.items()))


def find_check(key: str) -> Check | None:
    """The check whose ID (any case) or name is *key*, or ``None``.

    Example:
        >>> find_check("ga101").name, find_check("repeated-cell-in-container").check_id
        ('repeated-cell-in-container', 'GA101')
    """
    for check in all_checks().values():
        if key.upper() == check.check_id or key.lower() == check.name:
            return check
    return None

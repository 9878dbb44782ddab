"""One cause, one finding: fold a confirming check's findings into the findings they confirm.

A check that declares ``confirms="GA201"`` (GA905: one real training step shows that a
trainable parameter left out of the optimizer did not move) finds again, from other
evidence, what the confirmed check found. When the confirmed check's findings *cover* a
finding of it, that finding is not reported on its own; it is folded into them:

- they get its ID (and the IDs folded into it) in ``confirmed_by``, so that
  ``report.by_check("GA905")``, JSON and SARIF still name it;
- its subjects join theirs, so that ``report.about(...)`` still finds every one;
- the worse of the two severities is kept;
- the message stays theirs, followed by ``Confirmed by GA905 (...)``, or, with
  ``keeps_message="both"``, by its message too (a probe's numbers after a static finding);
- their subject, fix and graph nodes stay theirs.

How a finding is covered is its check's ``covered_by``: ``"subjects"`` (every subject of it
is a subject of the confirmed findings: the same parameters), or ``"cells"`` (every subject
of it is a cell that is, or holds, a subject of the confirmed findings: a ``backbone`` left
in eval mode covers the ``backbone.0.1`` BatchNorm that a mode check reports; ``(root)``
holds every subject). A finding that is not covered is kept as it is, and so is one whose
``direction`` is the other way from theirs (GA908's updates too large and a GA721 rate *below*
its range: folded, they would say one thing and its opposite; kept apart, each says its own).

``confirms`` may name several checks, tried in order: GA907 (the loss rose) folds into GA908
(the updates are too large) when it fires, else into GA721 (the rate is out of range). A chain
folds from its far end: GA907 into GA908 first, then GA908, carrying GA907, into GA721.

Example:
    >>> from graphaudit.checks import all_checks
    >>> static = Finding("GA201", "trainable-not-in-optimizer", "error", "head", "Left out.", "Add it.",
    ...                  subjects=("head.weight", "head.bias"))
    >>> probe = Finding("GA905", "probe-trainable-not-updated", "error", "head", "Did not move.", "Add it.",
    ...                 subjects=("head.weight", "head.bias"))
    >>> [(f.check_id, f.confirmed_by, f.message) for f in merge_confirmations([static, probe], all_checks().values())]
    [('GA201', ('GA905',), 'Left out. Confirmed by GA905 (probe-trainable-not-updated).')]
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from graphaudit.checks import Check
from graphaudit.checks._shared.grouping import holds
from graphaudit.findings import Finding, severity_rank
from graphaudit.text import listing

__all__ = ["covers", "defer", "fold_order", "merge_confirmations"]


def merge_confirmations(findings: list[Finding], checks: Iterable[Check]) -> list[Finding]:
    """*findings*, with those of confirming checks folded into the findings they confirm."""
    by_id = {check.check_id: check for check in checks}
    # each finding with its own subjects: what covers it is judged on those, not on what folded into it
    merged = [(finding, finding.subjects) for finding in findings]
    for check_id in fold_order(by_id.values()):
        merged = _fold(merged, by_id[check_id], by_id)
    return [finding for finding, _ in merged]


def defer(findings: list[Finding], checks: Iterable[Check]) -> list[Finding]:
    """*findings* without those of checks that defer to a check that reported (``register(defers_to=)``).

    A check's finding is dropped when a finding of a check it defers to covers it: any finding,
    with ``deferred_when="reported"``; else one covering its subjects, as ``covered_by`` says.

    Example:
        >>> causal = Check("GA341", "future-tokens-reach-past", "error", lambda ctx: [],
        ...                defers_to=(("GA340", "the samples mix: what moves cannot be told apart"),))
        >>> mixing = Finding("GA340", "batch-elements-mix", "error", "(root)", "Samples mix.", "Fix it.")
        >>> future = Finding("GA341", "future-tokens-reach-past", "error", "(root)", "Future leaks.", "Mask it.")
        >>> [f.check_id for f in defer([mixing, future], [causal])], defer([future], [causal]) == [future]
        (['GA340'], True)
    """
    by_id = {check.check_id: check for check in checks}
    reported: dict[str, list[str]] = {}
    for finding in findings:  # what a check confirmed, folded into another's finding, it reported too
        for check_id in (finding.check_id, *finding.confirmed_by):
            reported.setdefault(check_id, []).extend(finding.subjects)
    return [finding for finding in findings if not _deferred(finding, by_id, reported)]


def _deferred(finding: Finding, by_id: dict[str, Check], reported: dict[str, list[str]]) -> bool:
    check = by_id.get(finding.check_id)
    if check is None:
        return False
    for target, _ in check.defers_to:
        if target not in reported:
            continue
        if check.deferred_when == "reported" or covers(
            reported[target], finding.subjects, check.deferred_when
        ):
            return True
    return False


def fold_order(checks: Iterable[Check]) -> list[str]:
    """The IDs of the confirming checks among *checks*, each after every check that confirms it.

    Raises ``ValueError`` on a cycle (two checks confirming each other).

    Example:
        >>> from graphaudit.checks import all_checks
        >>> order = fold_order(all_checks().values())
        >>> order.index("GA907") < order.index("GA908"), order.index("GA905") < order.index("GA201")
        (True, True)
    """
    by_id = {check.check_id: check for check in checks}
    confirmers: dict[str, list[str]] = {}
    for check in by_id.values():
        for target in check.confirms:
            confirmers.setdefault(target, []).append(check.check_id)
    order: list[str] = []
    state: dict[str, str] = {}

    def visit(check_id: str, path: tuple[str, ...]) -> None:
        if state.get(check_id) == "done":
            return
        if check_id in path:
            raise ValueError(f"checks confirm each other in a cycle: {' -> '.join((*path, check_id))}")
        for confirmer in confirmers.get(check_id, ()):
            visit(confirmer, (*path, check_id))
        state[check_id] = "done"
        if by_id.get(check_id) is not None and by_id[check_id].confirms:
            order.append(check_id)

    for check_id in sorted(by_id):
        visit(check_id, ())
    return order


def covers(confirmed: Iterable[str], subjects: Iterable[str], how: str) -> bool:
    """Whether the *confirmed* subjects cover every one of *subjects*, as ``covered_by=`` *how* says.

    Example:
        >>> covers(["head.weight", "head.bias"], ["head.weight"], "subjects")
        True
        >>> covers(["backbone.0.1", "backbone.1.1"], ["backbone"], "cells"), covers(["head.0"], ["backbone"], "cells")
        (True, False)
    """
    confirmed = set(confirmed)
    return all(any(_relates(mine, theirs, how) for theirs in confirmed) for mine in subjects)


def _named(check_id: str, by_id: dict[str, Check]) -> str:
    check = by_id.get(check_id)
    return f"{check_id} ({check.name})" if check is not None else check_id


def _relates(mine: str, theirs: str, how: str) -> bool:
    return mine == theirs or (how == "cells" and holds(mine, theirs))


def _agree(finding: Finding, other: Finding, by_id: dict[str, Check]) -> bool:
    """Whether *finding* and *other* do not say opposite ways of their cause (a rate too large, too small)."""
    mine, theirs = (
        by_id[f.check_id].direction_of(f) if f.check_id in by_id else "" for f in (finding, other)
    )
    return not mine or not theirs or mine == theirs


Entry = tuple[Finding, tuple[str, ...]]  # a finding, and the subjects it had before anything folded into it


def _fold(findings: list[Entry], check: Check, by_id: dict[str, Check]) -> list[Entry]:
    """*findings*, with every finding of *check* that a finding of a check it confirms covers folded into it."""
    how = check.covered_by
    folded: set[int] = set()
    into: dict[int, list[Finding]] = {}  # index of a confirmed finding -> the findings folded into it
    for index, (finding, own) in enumerate(findings):
        if finding.check_id != check.check_id:
            continue
        for target in check.confirms:
            hits = [
                i
                for i, (other, _) in enumerate(findings)
                if other.check_id == target
                and any(_relates(m, t, how) for m in own for t in other.subjects)
                and _agree(finding, other, by_id)
            ]
            if hits and covers((s for i in hits for s in findings[i][0].subjects), own, how):
                for i in hits:
                    into.setdefault(i, []).append(finding)
                folded.add(index)
                break
    return [
        (_confirmed(finding, into[index], check, by_id), own) if index in into else (finding, own)
        for index, (finding, own) in enumerate(findings)
        if index not in folded
    ]


def _confirmed(
    finding: Finding, confirmations: list[Finding], check: Check, by_id: dict[str, Check]
) -> Finding:
    ids = tuple(dict.fromkeys(i for c in confirmations for i in (c.check_id, *c.confirmed_by)))
    ids = tuple(i for i in ids if i not in finding.confirmed_by)
    if check.keeps_message == "both":  # their messages, which name what was folded into them
        messages = " ".join(dict.fromkeys(c.message for c in confirmations))
        message = f"{finding.message} Confirmed by {_named(check.check_id, by_id)}: {messages}"
    else:
        names = [_named(i, by_id) for i in ids]  # every one named: the report is read by check ID
        message = f"{finding.message} Confirmed by {listing(names, limit=len(names))}."
    subjects = list(dict.fromkeys((*finding.subjects, *(s for c in confirmations for s in c.subjects))))
    for c in confirmations:  # a group's name (the cell holding its subjects) only when it adds a place
        if c.subject not in (finding.subject, *subjects) and not any(holds(c.subject, s) for s in subjects):
            subjects.append(c.subject)
    subjects = [s for s in subjects if s != finding.subject or s in finding.subjects]
    return dataclasses.replace(
        finding,
        severity=min((finding.severity, *(c.severity for c in confirmations)), key=severity_rank),
        subjects=tuple(subjects),
        confirmed_by=(*finding.confirmed_by, *ids),
        message=message,
    )

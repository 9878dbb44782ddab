"""Findings: small immutable records of what a check found.

A finding is about one *cause*. When one cause touches several parameters or cells (a head
left out of the optimizer: its weight and its bias), the check reports one finding whose
``subjects`` lists each of them, and whose ``subject`` names the group (the cell that holds
them all, or the first one). Every subject stays queryable (:meth:`Finding.concerns`).

Example:
    >>> f = Finding("GA201", "trainable-not-in-optimizer", "error", "fc",
    ...             "fc.weight, fc.bias are trainable but not in the optimizer.", "Pass them to it.",
    ...             subjects=("fc.weight", "fc.bias"))
    >>> f.severity, f.subject, f.concerns("fc.bias")
    ('error', 'fc', True)
"""

from __future__ import annotations

import dataclasses
import math
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, ClassVar, Literal

from graphaudit.text import plural, printable

__all__ = [
    "FAIL_ON",
    "SEVERITIES",
    "Cause",
    "Facts",
    "Finding",
    "Severity",
    "plural",
    "printable",
    "severity_rank",
]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
# What fails a run at each ``fail_on`` level (graphaudit audit --fail-on, AuditCallback(fail_on=)).
FAIL_ON: dict[str, tuple[Severity, ...]] = {"error": ("error",), "warning": ("error", "warning"), "never": ()}


def severity_rank(severity: str) -> int:
    """0 for ``error``, 1 for ``warning``, 2 for ``info``: the order reports use.

    Example:
        >>> sorted(["info", "error", "warning"], key=severity_rank)
        ['error', 'warning', 'info']
    """
    return SEVERITIES.index(severity)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Facts:
    """A record of facts that JSON carries as they are (:meth:`fields`): a cause, or a part of one.

    A part (one version of a parameter across ranks, one pair of activations) is written into its
    cause's message and nested in its fields; only a :class:`Cause` has a message and fix of its own.
    """

    def fields(self) -> dict[str, Any]:
        """The facts as JSON values: ``kind`` (the record's class) and each field."""
        return {
            "kind": type(self).__name__,
            **{f.name: _plain(getattr(self, f.name)) for f in dataclasses.fields(self) if f.repr},
        }


@dataclass(frozen=True)
class Cause(Facts, ABC):
    """What a check found, as data: the base of every check's typed cause.

    A check declares a small frozen dataclass of its cause's facts (the rate, the range, the
    subjects, the counts) and renders its :meth:`message` and :meth:`fix` from them with the
    words of :mod:`graphaudit.text`. The facts travel with the finding (:attr:`Finding.cause`):
    JSON and SARIF carry them (:meth:`fields`), and what decides on a finding (which way its
    cause goes, whether its message already lists its subjects) reads them, never its words.

    ``names_subjects`` says whether the message spells out the finding's subjects (a group's
    listing does), so that a text view need not list them again; ``direction`` which way the
    cause goes (``"too large"``, ``"too small"``), when the check's findings can say either.

    Example:
        >>> from dataclasses import dataclass
        >>> @dataclass(frozen=True)
        ... class RateTooHigh(Cause):
        ...     rate: float
        ...     def message(self) -> str:
        ...         return f"The rate {self.rate:g} is too high."
        ...     def fix(self) -> str:
        ...         return "Lower it."
        >>> RateTooHigh(0.5).message(), RateTooHigh(0.5).fields()
        ('The rate 0.5 is too high.', {'kind': 'RateTooHigh', 'rate': 0.5})
    """

    names_subjects: ClassVar[bool] = False

    @abstractmethod
    def message(self) -> str:
        """What is wrong, in words."""

    @abstractmethod
    def fix(self) -> str:
        """What to do, in words."""

    @property
    def direction(self) -> str:
        return ""


def _plain(value: Any) -> Any:
    """*value* as a JSON value: tuples as lists, NumPy scalars as numbers, nested facts as their fields.

    A float that is not finite is the word JSON lacks a number for (``"nan"``, ``"inf"``, ``"-inf"``).
    """
    if isinstance(value, float) and not math.isfinite(value):
        return str(value)  # "nan", "inf", "-inf": JSON has no such numbers
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, Facts):
        return value.fields()
    if isinstance(value, (tuple, list)):
        return [_plain(v) for v in value]
    if isinstance(value, dict):
        return {str(k): _plain(v) for k, v in value.items()}
    if hasattr(value, "item") and callable(value.item):  # a NumPy scalar
        return _plain(value.item())
    raise TypeError(f"a cause's field holds {type(value).__name__} {value!r}: causes hold plain values")


@dataclass(frozen=True)
class Finding:
    """One problem (or, with severity ``info``, one fact worth seeing) found by a check.

    ``subject`` is the exact parameter name or dotted cell path concerned (for a group: the
    cell that holds every member, or the first member); ``subjects`` every parameter or cell
    the cause touches (just ``(subject,)`` for a finding about one thing); ``message`` says
    what is wrong and ``fix`` what to do, kept apart so reports can lay them out; ``nodes``
    are the graph nodes involved (see :mod:`graphaudit.graph`); ``confirmed_by`` the IDs of
    the checks that found the same cause again from other evidence (a probe step confirming
    a static finding), whose findings were merged into this one; ``cause`` the facts the
    message and fix were rendered from (:class:`Cause`), which JSON and SARIF carry.
    """

    check_id: str
    name: str
    severity: Severity
    subject: str
    message: str
    fix: str
    nodes: tuple[str, ...] = field(default=())
    subjects: tuple[str, ...] = field(default=())
    confirmed_by: tuple[str, ...] = field(default=())
    cause: Cause | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")
        object.__setattr__(self, "nodes", tuple(self.nodes))
        object.__setattr__(self, "subjects", tuple(self.subjects) or (self.subject,))
        object.__setattr__(self, "confirmed_by", tuple(self.confirmed_by))

    def sort_key(self) -> tuple[int, str, str, str]:
        return (severity_rank(self.severity), self.check_id, self.subject, self.message)

    def concerns(self, name: str) -> bool:
        """Whether *name* (a parameter name or cell path; a glob is allowed) is a subject of this finding.

        Example:
            >>> Finding("GA201", "n", "error", "fc", "m", "f", subjects=("fc.weight",)).concerns("fc.*")
            True
        """
        return any(fnmatchcase(s, name) for s in {self.subject, *self.subjects})

    def names_its_subjects(self) -> bool:
        """Whether the message already spells out the subjects (its cause says so: a group's listing does).

        A text view then need not list them again above it.

        Example:
            >>> from dataclasses import dataclass
            >>> @dataclass(frozen=True)
            ... class LeftOut(Cause):
            ...     names_subjects = True
            ...     names: tuple[str, ...]
            ...     def message(self): return f"{' and '.join(self.names)} are left out."
            ...     def fix(self): return "Add them."
            >>> cause = LeftOut(("fc.weight", "fc.bias"))
            >>> Finding("GA201", "n", "error", "fc", cause.message(), cause.fix(), subjects=cause.names,
            ...         cause=cause).names_its_subjects()
            True
        """
        return self.cause is not None and self.cause.names_subjects

    def reported_by(self, check_id: str) -> bool:
        """Whether check *check_id* found this: it made the finding, or confirmed it."""
        return self.check_id == check_id or check_id in self.confirmed_by

    def to_dict(self) -> dict[str, Any]:
        return {
            "check_id": self.check_id,
            "name": self.name,
            "severity": self.severity,
            "subject": self.subject,
            "subjects": list(self.subjects),
            "message": self.message,
            "fix": self.fix,
            "nodes": list(self.nodes),
            "confirmed_by": list(self.confirmed_by),
            **({"cause": self.cause.fields()} if self.cause is not None else {}),
        }

    def __str__(self) -> str:
        return printable(
            f"{self.check_id} {self.name} [{self.severity}] {self.subject}: {self.message} Fix: {self.fix}"
        )

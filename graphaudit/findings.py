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

import re
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import Any, Literal

__all__ = ["FAIL_ON", "SEVERITIES", "Finding", "Severity", "plural", "printable", "severity_rank"]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")
# What fails a run at each ``fail_on`` level (graphaudit audit --fail-on, AuditCallback(fail_on=)).
FAIL_ON: dict[str, tuple[Severity, ...]] = {"error": ("error",), "warning": ("error", "warning"), "never": ()}


_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(value: object, *, newlines: bool = False) -> str:
    """*value* as text a terminal or a log shows as written: every non-printable character escaped.

    A newline in a cell name would start a line of its own (a forged ``OK: ...``), ``\\r``
    would overwrite one, an ESC byte would drive the terminal, a direction override
    (U+202E) would reorder what is shown. Each character that is not printable
    (:meth:`str.isprintable`: controls, format and separator characters other than the
    space) is written as its escape, ``\\n``, ``\\x1b`` as ``\\u001b``, ``\\u202e``: escapes that
    JSON and TOML strings read back as the same character. With *newlines*, ``\\n`` is kept
    (text made of several lines, each already escaped).

    Example:
        >>> print(printable("head\\nOK: no findings\\x1b[2J\\u202e"))
        head\\nOK: no findings\\u001b[2J\\u202e
        >>> printable("a\\nb", newlines=True) == "a\\nb"
        True
    """
    text = str(value)
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable() or (newlines and char == "\n"):
            out.append(char)
        elif char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        elif ord(char) > 0xFFFF:  # as a JSON string writes it: a surrogate pair
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        else:
            out.append(f"\\u{ord(char):04x}")
    return "".join(out)


def severity_rank(severity: str) -> int:
    """0 for ``error``, 1 for ``warning``, 2 for ``info``: the order reports use.

    Example:
        >>> sorted(["info", "error", "warning"], key=severity_rank)
        ['error', 'warning', 'info']
    """
    return SEVERITIES.index(severity)  # type: ignore[arg-type]


def plural(count: int, word: str) -> str:
    """``"1 error"``, ``"2 errors"``: a count and its noun, as every report writes them.

    Example:
        >>> plural(1, "error"), plural(2, "warning"), plural(3, "info")
        ('1 error', '2 warnings', '3 info')
    """
    return f"{count} {word}{'' if count == 1 or word in _UNCOUNTABLE else 's'}"


_UNCOUNTABLE = frozenset({"info"})


@dataclass(frozen=True)
class Finding:
    """One problem (or, with severity ``info``, one fact worth seeing) found by a check.

    ``subject`` is the exact parameter name or dotted cell path concerned (for a group: the
    cell that holds every member, or the first member); ``subjects`` every parameter or cell
    the cause touches (just ``(subject,)`` for a finding about one thing); ``message`` says
    what is wrong and ``fix`` what to do, kept apart so reports can lay them out; ``nodes``
    are the graph nodes involved (see :mod:`graphaudit.graph`); ``confirmed_by`` the IDs of
    the checks that found the same cause again from other evidence (a probe step confirming
    a static finding), whose findings were merged into this one.
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

    def names_its_subjects(self, first: int = 4) -> bool:
        """Whether the message already spells out the *first* subjects (a group's listing does), by whole name.

        A text view then need not list them again above it.

        Example:
            >>> grouped = Finding("GA201", "n", "error", "fc", "fc.weight and fc.bias are left out.", "f",
            ...                   subjects=("fc.weight", "fc.bias"))
            >>> grouped.names_its_subjects(), Finding("GA201", "n", "error", "fc", "2 parameters.", "f",
            ...                                      subjects=("fc.weight", "fc.bias")).names_its_subjects()
            (True, False)
        """
        return all(
            re.search(rf"(?<![\w.]){re.escape(name)}(?!\w|\.\w)", self.message)
            for name in self.subjects[:first]
        )

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
        }

    def __str__(self) -> str:
        return printable(
            f"{self.check_id} {self.name} [{self.severity}] {self.subject}: {self.message} Fix: {self.fix}"
        )

"""Findings: small immutable records of what a check found.

Example:
    >>> f = Finding("GA201", "trainable-not-in-optimizer", "error", "fc.bias",
    ...             "fc.bias is trainable but not in the optimizer.", "Pass it to the optimizer.")
    >>> f.severity, f.subject
    ('error', 'fc.bias')
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Literal

__all__ = ["SEVERITIES", "Finding", "Severity", "severity_rank"]

Severity = Literal["error", "warning", "info"]
SEVERITIES: tuple[Severity, ...] = ("error", "warning", "info")


def severity_rank(severity: str) -> int:
    """0 for ``error``, 1 for ``warning``, 2 for ``info``: the order reports use.

    Example:
        >>> sorted(["info", "error", "warning"], key=severity_rank)
        ['error', 'warning', 'info']
    """
    return SEVERITIES.index(severity)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Finding:
    """One problem (or, with severity ``info``, one fact worth seeing) found by a check.

    ``subject`` is the exact parameter name or dotted cell path concerned; ``message`` says
    what is wrong and ``fix`` what to do, kept apart so reports can lay them out; ``nodes``
    are the graph nodes involved (see :mod:`graphaudit.graph`).
    """

    check_id: str
    name: str
    severity: Severity
    subject: str
    message: str
    fix: str
    nodes: tuple[str, ...] = field(default=())

    def __post_init__(self) -> None:
        if self.severity not in SEVERITIES:
            raise ValueError(f"severity must be one of {SEVERITIES}, got {self.severity!r}")

    def sort_key(self) -> tuple[int, str, str, str]:
        return (severity_rank(self.severity), self.check_id, self.subject, self.message)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["nodes"] = list(self.nodes)
        return data

    def __str__(self) -> str:
        return f"{self.check_id} {self.name} [{self.severity}] {self.subject}: {self.message} Fix: {self.fix}"

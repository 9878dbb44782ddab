"""The families of checks: an ID's digit names one, or a range of IDs inside a digit's family.

Example:
    >>> family_of("GA201")[1], family_of("GA955")[0]
    ('optimizer coverage and freezing', '950-979')
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from graphaudit.checks import Check

__all__ = ["FAMILIES", "FAMILY_RANGES", "PORT", "SCHEDULES", "WATCH", "by_family", "family_of", "id_span"]

FAMILIES = {
    "0": "data pipeline",
    "1": "weight sharing",
    "2": "optimizer coverage and freezing",
    "3": "wiring and connectivity",
    "4": "loss and output pairing",
    "5": "train/eval mode",
    "6": "initialization",
    "7": "API misuse",
    "8": "distributed consistency",
    "9": "probe steps (real training steps, confirmed from the numbers)",
}

SCHEDULES = "learning-rate schedules (read without running them)"
WATCH = "training watch (watchpoints on a real training run)"
PORT = "port against its original (reference=)"
#: Families that own a range of IDs inside a digit's family: (first, last, name), ID digits only.
FAMILY_RANGES = (("630", "649", PORT), ("914", "919", SCHEDULES), ("950", "979", WATCH))


def family_of(check_id: str) -> tuple[str, str]:
    """The key and name of the family of *check_id*: a range of :data:`FAMILY_RANGES`, else its digit's.

    Example:
        >>> family_of("GA201")[1], family_of("GA950")
        ('optimizer coverage and freezing', ('950-979', 'training watch (watchpoints on a real training run)'))
    """
    number = check_id[2:]
    for first, last, name in FAMILY_RANGES:
        if first <= number <= last:
            return f"{first}-{last}", name
    return check_id[2], FAMILIES[check_id[2]]


def by_family(checks: Iterable[Check]) -> dict[str, list[Check]]:
    """*checks* grouped by family, the families in the order of their first check's ID.

    Example:
        >>> from graphaudit.checks import all_checks
        >>> families = by_family(all_checks().values())
        >>> [check.check_id for check in families[SCHEDULES]]
        ['GA914', 'GA915', 'GA916']
    """
    families: dict[str, list[Check]] = {}
    for check in sorted(checks, key=lambda c: c.check_id):
        families.setdefault(check.family, []).append(check)
    return families


def id_span(members: Iterable[Check]) -> str:
    """The IDs of one family's checks in words: ``GA1xx`` for a whole digit, else first-last.

    Example:
        >>> from graphaudit.checks import all_checks
        >>> id_span(all_checks()[i] for i in ("GA914", "GA916")), id_span([all_checks()["GA101"]])
        ('GA914-GA916', 'GA1xx')
    """
    checks = sorted(members, key=lambda c: c.check_id)
    first, last = checks[0].check_id, checks[-1].check_id
    if checks[0].family_key.isdigit():
        return f"GA{checks[0].family_key}xx"
    return first if first == last else f"{first}-{last}"

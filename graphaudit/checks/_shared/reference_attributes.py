"""What the attribute checks (GA635-GA639) share: the differences gathered by cause, and values as text.

One cause, one finding: the same attribute with the same two values, wherever the port has it
(every block's LayerNorm built with one wrong epsilon), is one finding naming the cells.

Example:
    >>> value_text(((1, 1), (1, 1))), value_text("same"), value_text(1e-05), value_text(True)
    ('1 on each side', "'same'", '1e-05', 'True')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import Any

from graphaudit.checks._shared.grouping import ROOT, holder, listing
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Finding

__all__ = ["differences", "gathered", "value_text"]


def value_text(value: Any) -> str:
    """An attribute's value as a sentence says it: pads ``(begin, end)`` per dimension in words."""
    if isinstance(value, tuple) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        if len({v for pair in value for v in pair}) == 1:
            return f"{value[0][0]} on each side"
        return "(" + ", ".join(f"{a} before, {b} after" for a, b in value) + ")"
    if isinstance(value, str):
        return repr(value)
    if isinstance(value, float):
        return f"{value:.6g}"
    return str(value)


def differences(
    ctx: AuditContext, attributes: Iterable[str], kinds: Iterable[str]
) -> list[AttributeDifference]:
    """The differences of the evidence in *attributes* of layers of *kinds*."""
    wanted, of = set(attributes), set(kinds)
    return [
        d
        for d in ctx.need(ReferenceAttributes).differences
        if d.difference.attribute in wanted and d.difference.kind in of
    ]


def gathered(
    ctx: AuditContext,
    found: list[AttributeDifference],
    say: Callable[[AttributeDifference, str], tuple[str, str, str]],
) -> Iterator[Finding]:
    """One finding per attribute and pair of values; *say*(first, cells) gives its severity, message and fix."""
    groups: dict[tuple[str, str, str, str], list[AttributeDifference]] = {}
    for d in found:
        key = (
            d.difference.kind,
            d.difference.attribute,
            repr(d.difference.port),
            repr(d.difference.reference),
        )
        groups.setdefault(key, []).append(d)
    for members in groups.values():
        paths = [d.port or ROOT for d in members]
        subject = paths[0] if len(paths) == 1 else holder(paths)
        cells = f"{paths[0]} ({members[0].cell_class}, the original's {members[0].reference or '(root)'})"
        if len(paths) > 1:
            cells = f"{len(paths)} cells alike ({listing(paths)})"
        severity, message, fix = say(members[0], cells)
        yield ctx.finding(
            severity,
            subject,
            message,
            fix,
            tuple(d.node for d in members),
            subjects=tuple(paths),
        )

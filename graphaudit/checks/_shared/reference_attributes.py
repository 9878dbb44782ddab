"""What the attribute checks (GA635-GA639) share: the differences gathered by cause, and values as text.

One cause, one finding: the same attribute with the same two values, wherever the port has it
(every block's LayerNorm built with one wrong epsilon), is one finding naming the cells. Each
check's causes derive from :class:`AttributeDiffers`, which holds the cells and both values.

Example:
    >>> value_text(((1, 1), (1, 1))), value_text("same"), value_text(1e-05), value_text(True)
    ('1 on each side', "'same'", '1e-05', 'True')
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any, TypeVar

from graphaudit.checks._shared.grouping import ROOT, holder
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_attributes import AttributeDifference, ReferenceAttributes
from graphaudit.findings import Cause, Finding, Severity
from graphaudit.text import bracketed, listing

__all__ = ["AttributeDiffers", "differences", "gathered", "value_text"]

_Differs = TypeVar("_Differs", bound="AttributeDiffers")


@dataclass(frozen=True)
class AttributeDiffers(Cause):
    """The base of the causes of GA635-GA639: cells whose attribute has another value than the original's.

    Example:
        >>> @dataclass(frozen=True)
        ... class EpsilonDiffers(AttributeDiffers):
        ...     def message(self): return f"{self.cells_text()}: another epsilon."
        ...     def fix(self): return "Set it."
        >>> EpsilonDiffers(("norm",), "LayerNorm", "norm", 1e-07, 1e-12).cells_text()
        "norm (LayerNorm, the original's norm)"
        >>> EpsilonDiffers(("a.norm", "b.norm"), "LayerNorm", "a.norm", 1e-07, 1e-12).message()
        '2 cells alike (a.norm and b.norm): another epsilon.'
    """

    names_subjects = True
    cells: tuple[str, ...]  # the port's cells alike, by path ((root): the network itself)
    cell_class: str  # the first cell's class
    original: str  # the first cell's module in the original, by path ("" for the model itself)
    port: Any  # the port's value, in torch's convention
    reference: Any  # the original's value

    def cells_text(self) -> str:
        """The cells as the message starts with them: one with its class and original, several listed."""
        if len(self.cells) > 1:
            return f"{len(self.cells)} cells alike ({listing(self.cells)})"
        return f"{self.cells[0]} ({self.cell_class}, the original's {self.original or '(root)'})"

    @classmethod
    def between(
        cls: type[_Differs], first: AttributeDifference, cells: tuple[str, ...], *facts: Any
    ) -> _Differs:
        """The cause of *first*'s difference in all of *cells* (*facts*: the subclass's own fields)."""
        d = first.difference
        return cls(cells, first.cell_class, first.reference, _plain(d.port), _plain(d.reference), *facts)


def _plain(value: Any) -> Any:
    """An attribute's value with lists as tuples, as a cause holds it."""
    return tuple(_plain(v) for v in value) if isinstance(value, (list, tuple)) else value


def value_text(value: Any) -> str:
    """An attribute's value as a sentence says it: pads ``(begin, end)`` per dimension in words."""
    if isinstance(value, tuple) and value and all(isinstance(v, tuple) and len(v) == 2 for v in value):
        if len({v for pair in value for v in pair}) == 1:
            return f"{value[0][0]} on each side"
        return bracketed((f"{a} before, {b} after" for a, b in value), "()")
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
    say: Callable[[AttributeDifference, tuple[str, ...]], tuple[Severity, AttributeDiffers]],
) -> Iterator[Finding]:
    """One finding per attribute and pair of values; *say*(first, cells) gives its severity and cause."""
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
        paths = tuple(d.port or ROOT for d in members)
        subject = paths[0] if len(paths) == 1 else holder(list(paths))
        severity, cause = say(members[0], paths)
        yield ctx.finding(severity, subject, cause, tuple(d.node for d in members), subjects=paths)

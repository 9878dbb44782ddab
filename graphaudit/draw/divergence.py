"""A port's comparison with its original, on the drawing: each compared cell coloured by its divergence.

:class:`Divergence` is what the drawing needs of the comparison, as plain data (the report
side makes it from ``Report.reference``: :func:`graphaudit.report.render.divergence_of`):
for each compared cell call the ratio of its largest error to its dtype's tolerance, with
the figures for its tooltip; the cell where the port first parts from the original; the
cells no module of the original stands for; and the table and mapping the HTML page shows.

The fill goes from bluish green (agrees: the error far below the tolerance) to reddish
purple (diverges: the error 1e4 times the tolerance and more), hues apart from the
findings' vermillion, orange and blue (:data:`~graphaudit.draw.style.SEVERITY_FILLS`); a
finding on the box keeps its border and check IDs. The first diverging cell gets a second
border (``peripheries=2``; an open cluster, which has one border only, a bold one); a cell
that was not compared is grey, its text greyed.

Example:
    >>> divergence_fill(1e-4), divergence_fill(1.0), divergence_fill(1.01), divergence_fill(1e4)
    ('#a9dcc7', '#e3f3ec', '#f0e1ea', '#b45a91')
    >>> shade = Divergence({("fc", 0): Shade(20.0, ("fc <- fc",))}, ("fc", 0), frozenset({"act"}))
    >>> shade.shade_of("fc", 0).fill, shade.is_first("fc", 0), shade.shade_of("act", 0).fill
    ('#dcb5cd', True, '#d6d6d6')
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Final

from graphaudit.draw.tree import Tree

__all__ = [
    "AGREE_FILLS",
    "DIVERGE_FILLS",
    "UNMATCHED_FILL",
    "UNMATCHED_FONT",
    "Divergence",
    "Shade",
    "divergence_fill",
    "shaded",
    "shades_of",
]

# Okabe & Ito's bluish green and reddish purple, from pale to strong: neither is a severity's hue.
#: The fill of a call that agrees, from a perfect match (error <= 1e-4 of the tolerance) to the tolerance.
AGREE_FILLS: Final = ("#a9dcc7", "#e3f3ec")
#: The fill of a call that diverges, from just past the tolerance to 1e4 times it and more.
DIVERGE_FILLS: Final = ("#f0e1ea", "#b45a91")
#: A cell no module of the original stands for, or a call with nothing of one shape to compare.
UNMATCHED_FILL: Final = "#d6d6d6"
UNMATCHED_FONT: Final = "#6b6b6b"
#: The border of the first diverging cell, as an open cluster draws it (a node gets a second border).
FIRST_WIDTH: Final = "4"
CLUSTER_PALER: Final = 0.6  # how much of an open cluster's fill is white
DECADES: Final = 4.0  # the span of each half of the scale, in powers of ten


def _badness(shade: Shade) -> float:
    return math.inf if shade.ratio is None or math.isnan(shade.ratio) else shade.ratio


def _mix(a: str, b: str, t: float) -> str:
    low = [int(a[i : i + 2], 16) for i in (1, 3, 5)]
    high = [int(b[i : i + 2], 16) for i in (1, 3, 5)]
    return "#" + "".join(f"{round(x + (y - x) * t):02x}" for x, y in zip(low, high))


def divergence_fill(ratio: float) -> str:
    """The fill of a call whose largest error is *ratio* times its tolerance (above 1: it diverges).

    Example:
        >>> divergence_fill(0.0) == AGREE_FILLS[0], divergence_fill(float("inf")) == DIVERGE_FILLS[1]
        (True, True)
    """
    if math.isnan(ratio):
        return DIVERGE_FILLS[1]
    if ratio <= 1:
        t = 1 + math.log10(ratio) / DECADES if ratio > 0 else 0.0
        return _mix(*AGREE_FILLS, min(max(t, 0.0), 1.0))
    t = math.log10(ratio) / DECADES if math.isfinite(ratio) else 1.0
    return _mix(*DIVERGE_FILLS, min(t, 1.0))


@dataclass(frozen=True)
class Shade:
    """One compared call: its error over the tolerance (``None``: nothing of one shape to compare)."""

    ratio: float | None
    lines: tuple[str, ...] = ()  # the figures, for the tooltip

    @property
    def fill(self) -> str:
        return UNMATCHED_FILL if self.ratio is None else divergence_fill(self.ratio)

    @property
    def cluster_fill(self) -> str:
        """The fill of an open cluster: the same hue, paler, so that the boxes inside it stand out."""
        return _mix(self.fill, "#ffffff", CLUSTER_PALER)

    @property
    def diverges(self) -> bool:
        return self.ratio is None or not self.ratio <= 1

    def classes(self, first: bool) -> list[str]:
        """The SVG classes of a shaded box: ``ga-ref-agrees``, ``-diverges`` or ``-unmatched``, and ``ga-ref-first``."""
        said = "unmatched" if self.ratio is None else "diverges" if self.diverges else "agrees"
        return [f"ga-ref-{said}", *(["ga-ref-first"] if first else [])]


def shaded(
    attrs: list[tuple[str, str]], shade: Shade, first: bool, cluster: bool = False
) -> list[tuple[str, str]]:
    """A box's DOT attributes with its shade: the fill says how far (a finding keeps its border and IDs).

    The first divergence gets a second border; an open cluster, which has only one, a bold wide one.
    """
    fill = shade.cluster_fill if cluster else shade.fill
    out = [("fillcolor", fill) if name == "fillcolor" else (name, value) for name, value in attrs]
    if shade.ratio is None:
        out.append(("fontcolor", UNMATCHED_FONT))
    if first and cluster:
        out = [(n, v) for n, v in out if n != "penwidth"] + [
            ("style", "rounded,filled,bold"),
            ("penwidth", FIRST_WIDTH),
        ]
    elif first:
        out.append(("peripheries", "2"))
    return out


UNMATCHED: Final = Shade(None, ("not compared: no module of the original stands for this cell",))


@dataclass(frozen=True)
class Divergence:
    """What the drawing shows of a port's comparison (see the module docstring).

    *calls*: ``(cell path, call index from 0) -> Shade``; *first*: the cell where the port
    first parts from the original and its call (``None``: every call of it), or ``None``;
    *unmatched*: the cells no module of the original stands for; *rows* and *mapping*: the
    table of the calls and the mapping of the parameters, as text cells, for the HTML page.
    """

    calls: Mapping[tuple[str, int], Shade]
    first: tuple[str, int | None] | None = None
    unmatched: frozenset[str] = frozenset()
    rows: tuple[tuple[str, ...], ...] = ()
    mapping: tuple[tuple[str, ...], ...] = ()
    notes: tuple[str, ...] = field(default=())

    def shade_of(self, path: str, call: int | None) -> Shade | None:
        """The shade of call *call* of the cell *path* (``None``: of its worst call), or ``None`` when not drawn."""
        if path in self.unmatched:
            return UNMATCHED
        if call is not None:
            return self.calls.get((path, call))
        return self._worst.get(path)

    @cached_property
    def _worst(self) -> dict[str, Shade]:
        """Each cell's worst call (once for the drawing: a structure view asks for every cell)."""
        worst: dict[str, Shade] = {}
        for (path, _), shade in self.calls.items():
            if path not in worst or _badness(shade) > _badness(worst[path]):
                worst[path] = shade
        return worst

    def is_first(self, path: str, call: int | None) -> bool:
        """Whether call *call* of *path* (``None``: any call) is where the port first parts from the original."""
        if self.first is None or self.first[0] != path:
            return False
        return call is None or self.first[1] is None or self.first[1] == call


def shades_of(tree: Tree, divergence: Divergence) -> dict[str, tuple[Shade, bool]]:
    """Each cell or call item of *tree* that *divergence* says something of: its shade, and whether it is the first.

    A call item is the n-th call of its cell in the traced pass, in the order the calls ran
    (as the comparison counts them); a cell item (the structure view, or a cell never called)
    shows its worst call.
    """
    found: dict[str, tuple[Shade, bool]] = {}
    counted: dict[str, int] = {}
    for key, item in sorted(tree.items.items(), key=lambda kv: kv[1].order):
        if item.kind == "call":
            call: int | None = counted.get(item.path, 0)
            counted[item.path] = (call or 0) + 1
        elif item.kind == "cell":
            call = None
        else:
            continue
        shade = divergence.shade_of(item.path, call)
        if shade is not None:
            found[key] = (shade, divergence.is_first(item.path, call))
    return found

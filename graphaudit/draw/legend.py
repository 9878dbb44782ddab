"""The legend of a drawing: one entry for each kind of box actually drawn, and each severity shown.

Entries are labelled by what the drawing holds: "parameter (shared)" only when every drawn
parameter is there because it is shared, "cell never called" for the dashed cells of the
traced view. The entries are stacked in one column, so that the legend does not widen the
drawing. The legend is laid out apart from the network (``pack`` with ``packmode=array_tu``:
each connected part on its own, placed in the order written, tops aligned): in one layout
its entries took the network's ranks, and a tall rank of the network left a large gap
between two entries. It is written first, so it sits on the left, at the top, where a
reader (and an HTML page scrolled to its start) sees it.

Example:
    >>> import graphviz
    >>> from graphaudit.draw.marks import Shown
    >>> dot = graphviz.Digraph()
    >>> add_legend(dot, {"param:w": Shown("param:w", "parameter", ["w"], [], None, why="flagged")}, "structure")
    >>> print([line.strip() for line in dot.body][3])
    "ga-legend-parameter" [label="parameter (with a finding)" fillcolor="#f7f7f7" shape=note]
"""

from __future__ import annotations

from collections.abc import Mapping

import graphviz

from graphaudit.draw.divergence import AGREE_FILLS, DIVERGE_FILLS, UNMATCHED_FILL, UNMATCHED_FONT
from graphaudit.draw.marks import Shown
from graphaudit.draw.style import KIND_COLORS, PLAIN_BORDER, SEVERITY_COLORS, SEVERITY_FILLS, SEVERITY_WIDTHS
from graphaudit.findings import SEVERITIES

__all__ = ["LEGEND", "SHAPES", "add_legend"]

SHAPES = {
    "call": "box",
    "cell": "box",
    "op": "ellipse",
    "parameter": "note",
    "input": "cds",
    "output": "cds",
    "loss": "octagon",
    "collapsed": "box3d",
    "rollup": "box3d",
}
LEGEND = {
    "cell": "cell",
    "call": "cell call",
    "op": "operation",
    "parameter": "parameter",
    "input": "input / output",
    "loss": "loss",
    "collapsed": "collapsed cluster",
    "rollup": "rolled-up repeated blocks",
}
#: How the drawing's connected parts are placed once the legend is one of them (see above).
PACK = [("pack", "8"), ("packmode", "array_tu")]
# Why a parameter is drawn (Item.why), as the legend says it; "asked" (params="all") adds nothing.
PARAMETER_REASONS = {"shared": "shared", "flagged": "with a finding"}


def _text(kind: str, drawn: list[Shown], view: str) -> str:
    if kind == "cell" and view == "traced":  # the traced view draws calls; a cell box was never called
        return "cell never called"
    whys = {entry.why for entry in drawn}
    if kind == "parameter" and whys <= set(PARAMETER_REASONS):
        return f"parameter ({' or '.join(text for why, text in PARAMETER_REASONS.items() if why in whys)})"
    return LEGEND[kind]


def add_legend(dot: graphviz.Digraph, shown: Mapping[str, Shown], view: str) -> None:
    """Add the legend cluster for the boxes in *shown* (drawn in *view*) to *dot*.

    Example:
        >>> import graphviz
        >>> from graphaudit.draw.marks import Shown
        >>> never = Shown("cell:spare", "cell", ["spare"], [], None, checks={"GA301": "warning"})
        >>> dot = graphviz.Digraph()
        >>> add_legend(dot, {"cell:spare": never}, "traced")
        >>> for line in dot.body[3:]:
        ...     print(line.strip())
        "ga-legend-cell" [label="cell never called" fillcolor="#ffffff"]
        "ga-legend-warning" [label="warning finding [check ID]" fillcolor="#f1ca73" color="#e69f00" penwidth=2.5]
        "ga-legend-cell" -> "ga-legend-warning" [style=invis]
        }
    """
    by_kind: dict[str, list[Shown]] = {}
    for entry in shown.values():
        if not entry.children:
            by_kind.setdefault("input" if entry.kind == "output" else entry.kind, []).append(entry)
    severities = {e.severity for e in shown.values()}
    keys: list[str] = []
    dot.attr("graph", _attributes=PACK)
    with dot.subgraph(name="cluster_ga-legend") as legend:
        legend.attr(
            "graph",
            _attributes=[
                ("id", "ga-legend"),
                ("label", "legend"),
                ("fillcolor", "#ffffff"),
                ("color", PLAIN_BORDER),
                ("penwidth", "1"),
                ("fontsize", "9"),
            ],
        )
        for kind in LEGEND:
            if kind in by_kind:
                keys.append(f"ga-legend-{kind}")
                attrs = [("label", _text(kind, by_kind[kind], view)), ("fillcolor", KIND_COLORS[kind])]
                if SHAPES[kind] != "box":
                    attrs.append(("shape", SHAPES[kind]))
                legend.node(keys[-1], _attributes=attrs)
        for severity in SEVERITIES:
            if severity in severities:
                keys.append(f"ga-legend-{severity}")
                legend.node(
                    keys[-1],
                    _attributes=[
                        ("label", f"{severity} finding [check ID]"),
                        ("fillcolor", SEVERITY_FILLS[severity]),
                        ("color", SEVERITY_COLORS[severity]),
                        ("penwidth", SEVERITY_WIDTHS[severity]),
                    ],
                )
        for name, attrs in _reference_entries(shown):
            keys.append(f"ga-legend-ref-{name}")
            legend.node(keys[-1], _attributes=attrs)
        for above, below in zip(keys, keys[1:]):  # one column: each entry a rank below the last
            legend.edge(above, below, _attributes=[("style", "invis")])


def _reference_entries(shown: Mapping[str, Shown]) -> list[tuple[str, list[tuple[str, str]]]]:
    """The legend's entries for a port's comparison with its original: only those the drawing shows."""
    shades = [e.shade for e in shown.values() if e.shade is not None]
    entries: list[tuple[str, list[tuple[str, str]]]] = []
    if any(s.ratio is not None and not s.diverges for s in shades):
        entries.append(
            ("agrees", [("label", "agrees with the original (green: closer)"), ("fillcolor", AGREE_FILLS[0])])
        )
    if any(s.ratio is not None and s.diverges for s in shades):
        entries.append(
            (
                "diverges",
                [("label", "diverges from the original (purple: further)"), ("fillcolor", DIVERGE_FILLS[1])],
            )
        )
    if any(e.first for e in shown.values()):
        entries.append(
            (
                "first",
                [
                    ("label", "first divergence from the original"),
                    ("fillcolor", "#ffffff"),
                    ("peripheries", "2"),
                ],
            )
        )
    if any(s.ratio is None for s in shades):
        entries.append(
            (
                "unmatched",
                [
                    ("label", "not compared with the original"),
                    ("fillcolor", UNMATCHED_FILL),
                    ("fontcolor", UNMATCHED_FONT),
                ],
            )
        )
    return entries

"""Where each finding shows, and what each drawn box looks like in each of its forms.

:func:`mark_items` puts every finding on the items of a :class:`~graphaudit.draw.tree.Tree`
that show its nodes (:class:`Marks`). That does not depend on what is collapsed: an item
drawn as itself (a node or an open cluster) shows the findings about it and only those, so
an open cluster around a flagged head stays plain; an item drawn as a closed box or a
roll-up shows every finding on it or anything inside it, so collapsing never hides a
finding. Whatever is coloured carries the IDs of the checks that coloured it. :func:`look` is one item in
one form (``node``, ``box`` or ``cluster``), :func:`run_look` a roll-up box;
:func:`shown_items` every box a :class:`~graphaudit.draw.collapse.Plan` draws.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> from graphaudit.draw.collapse import plan
    >>> from graphaudit.draw.build import build_tree
    >>> from graphaudit.findings import Finding
    >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
    >>> marks = mark_items(tree, [Finding("GA900", "x", "warning", "0", "m", "f", ("cell:0",))])
    >>> shown = shown_items(tree, plan(tree), marks)
    >>> shown["cell:0"].severity, shown["cell:"].severity
    ('warning', None)
    >>> look(tree, marks, "cell:", "box").checks, targets(marks, plan(tree, depth=0))
    ({'GA900': 'warning'}, ([['ga-cell_3a_']], []))
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphaudit.draw.collapse import ROLLUP_KINDS, ROLLUP_PREFIX, Plan, Run
from graphaudit.draw.divergence import Divergence, Shade, shades_of
from graphaudit.draw.style import human_count, svg_id
from graphaudit.draw.tree import Tree
from graphaudit.findings import Finding, severity_rank

__all__ = [
    "MAX_TOOLTIP_FINDINGS",
    "TIMES",
    "Marks",
    "Shown",
    "look",
    "mark_items",
    "run_look",
    "shown_items",
    "targets",
]

MAX_TOOLTIP_FINDINGS = 8
TIMES = "\u00d7"  # multiplication sign, as in "Bottleneck x6"
CLUSTER_LINE = 48  # a cluster's name and class on one line when that is at most this long


@dataclass
class Marks:
    """Findings, the items each is drawn on, and for each item the findings on it and below it."""

    findings: list[Finding]
    items_of: list[list[str]]
    own: dict[str, list[int]] = field(default_factory=dict)
    below: dict[str, list[int]] = field(default_factory=dict)
    shades: dict[str, tuple[Shade, bool]] = field(
        default_factory=dict
    )  # item -> (its shade, first divergence)

    def inside(self, key: str) -> list[int]:
        """The findings on *key* or anything inside it, in report order."""
        return sorted({*self.own.get(key, ()), *self.below.get(key, ())})


@dataclass
class Shown:
    """One drawn node or cluster."""

    key: str
    kind: str
    label: list[str]
    tooltip: list[str]
    parent: str | None
    children: list[str] = field(default_factory=list)
    checks: dict[str, str] = field(default_factory=dict)  # check ID -> worst severity
    notes: list[str] = field(default_factory=list)
    why: str = ""  # why a parameter is drawn (Item.why), for the legend
    form: str = "node"  # "node", "box" (a closed cluster or a roll-up) or "cluster"
    shade: Shade | None = None  # against the original (a reference's comparison), when compared
    first: bool = False  # where the port first parts from the original

    @property
    def severity(self) -> str | None:
        return min(self.checks.values(), key=severity_rank) if self.checks else None


def mark_items(tree: Tree, findings: list[Finding], divergence: Divergence | None = None) -> Marks:
    """Put each of *findings* on the items that show its nodes (and on the loss box, for the loss).

    With *divergence* (a port's comparison with its original), each cell or call item it
    compared gets its shade (:mod:`graphaudit.draw.divergence`).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.build import build_tree
        >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
        >>> marks = mark_items(tree, [Finding("GA900", "x", "info", "gone", "m", "f", ("cell:gone",))])
        >>> marks.items_of
        [[]]
    """
    marks = Marks(list(findings), [])
    for index, finding in enumerate(marks.findings):
        keys = tree.keys_of(finding.nodes, finding.subjects)
        marks.items_of.append(keys)
        for key in keys:
            marks.own.setdefault(key, []).append(index)
            parent = tree.items[key].parent
            while parent is not None:
                below = marks.below.setdefault(parent, [])
                if not below or below[-1] != index:
                    below.append(index)
                parent = tree.items[parent].parent
    if divergence is not None:
        marks.shades = shades_of(tree, divergence)
    return marks


def _worst(findings: list[Finding], indices: list[int]) -> dict[str, str]:
    checks: dict[str, str] = {}
    for index in indices:
        finding = findings[index]
        old = checks.get(finding.check_id)
        if old is None or severity_rank(finding.severity) < severity_rank(old):
            checks[finding.check_id] = finding.severity
    return checks


def _notes(findings: list[Finding], indices: list[int]) -> list[str]:
    notes: list[str] = []
    for index in indices:
        if len(notes) >= 2 * MAX_TOOLTIP_FINDINGS:
            break
        finding = findings[index]
        head = f"{finding.check_id} {finding.name} [{finding.severity}] {finding.subject}".replace("  ", " ")
        notes.append(head.strip())
        if finding.message:
            notes.append(f"  {finding.message} Fix: {finding.fix}")
    return notes


def descendants(tree: Tree, key: str) -> int:
    """How many items are inside *key*, at any depth."""
    count, stack = 0, list(tree.items[key].children)
    while stack:
        count += 1
        stack.extend(tree.items[stack.pop()].children)
    return count


def look(tree: Tree, marks: Marks, key: str, form: str, parent: str | None = None) -> Shown:
    """Item *key* drawn as a ``node`` (a leaf), a ``box`` (closed, swallowing what is inside) or a ``cluster``."""
    item = tree.items[key]
    found = marks.inside(key) if form == "box" else marks.own.get(key, [])
    entry = Shown(key, item.kind, list(item.label), list(item.tooltip), parent, why=item.why, form=form)
    entry.checks = _worst(marks.findings, found)
    entry.notes = _notes(marks.findings, found)
    if key in marks.shades:
        entry.shade, entry.first = marks.shades[key]
        entry.tooltip += [
            *entry.shade.lines,
            *(["the first divergence from the original"] if entry.first else []),
        ]
    if form == "box":
        entry.kind = "collapsed"
        inside = f"({descendants(tree, key)} nodes inside)"
        if item.first:  # a later call of a reused cell: its inside is drawn in the first call
            entry.tooltip.append(f"{inside[1:-1]}, as in the first call")
        else:
            entry.label.append(inside)
    elif form == "cluster" and len(" · ".join(entry.label)) <= CLUSTER_LINE:
        entry.label = [" · ".join(entry.label)]  # one line over the cluster: less height
    return entry


def run_look(tree: Tree, marks: Marks, run: Run, parent: str | None = None) -> Shown:
    """The roll-up box of *run*: every finding on or inside its blocks."""
    blocks = [tree.items[k] for k in run.members if tree.items[k].kind in ROLLUP_KINDS]
    first, last = blocks[0], blocks[-1]
    total = sum(block.params for block in blocks)
    label = [f"{first.cls} {TIMES}{run.count}", f"{first.label[0]} … {last.label[0]}"]
    if total:
        label.append(f"{human_count(total)} params")
    tooltip = [f"{run.count} consecutive {first.cls} blocks of the same structure", *label[1:]]
    found = sorted({i for k in run.members for i in marks.inside(k)})
    entry = Shown(run.key, "rollup", label, tooltip, parent, form="box")
    entry.checks = _worst(marks.findings, found)
    entry.notes = _notes(marks.findings, found)
    return entry


def form_of(tree: Tree, plan: Plan, key: str) -> str:
    if not tree.items[key].children:
        return "node"
    return "cluster" if key in plan.open else "box"


def shown_items(tree: Tree, plan: Plan, marks: Marks, runs: dict[str, Run] | None = None) -> dict[str, Shown]:
    """Every box *plan* draws, by key, parents before children and children in tree order."""
    shown: dict[str, Shown] = {}
    for key, item in tree.items.items():
        if plan.drawn[key] == key:
            parent = plan.drawn[item.parent] if item.parent is not None else None
            shown[key] = look(tree, marks, key, form_of(tree, plan, key), parent)
    for box, (members, count) in plan.rollups.items():
        run = (runs or {}).get(box) or Run(tree.items[members[0]].parent, tuple(members), count)
        parent = plan.drawn[run.parent] if run.parent is not None else None
        shown[box] = run_look(tree, marks, run, parent)
    for key, entry in shown.items():
        if entry.parent is not None:
            shown[entry.parent].children.append(key)
    rank = {key: i for i, key in enumerate(tree.items)}
    for entry in shown.values():  # a roll-up box sits where its first block was
        entry.children.sort(key=lambda k: rank[k[len(ROLLUP_PREFIX) :] if k.startswith(ROLLUP_PREFIX) else k])
    return shown


def targets(marks: Marks, plan: Plan) -> tuple[list[list[str]], list[Finding]]:
    """For each finding, the SVG ids of the boxes *plan* shows it on; and the findings not drawn at all."""
    found = [[svg_id(k) for k in dict.fromkeys(plan.drawn[k] for k in keys)] for keys in marks.items_of]
    return found, [f for f, keys in zip(marks.findings, marks.items_of) if not keys]

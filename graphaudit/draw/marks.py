"""What is drawn, and where each finding shows: the boxes of a plan, with findings marked on them.

A :class:`Shown` is one drawn node or cluster (an item of the tree, a collapsed cluster, or
a roll-up box) with the checks that flag it and, for a cluster, the worst severity found
inside it. :func:`shown_items` builds them from a :class:`~graphaudit.draw.tree.Tree` and a
:class:`~graphaudit.draw.collapse.Plan`; :func:`mark` puts the findings on them.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> from graphaudit.draw.collapse import plan
    >>> from graphaudit.draw.tree import build_tree
    >>> from graphaudit.findings import Finding
    >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
    >>> chosen = plan(tree)
    >>> shown = shown_items(tree, chosen)
    >>> mark(tree, chosen, shown, [Finding("GA900", "x", "warning", "0", "m", "f", ("cell:0",))])
    ([['ga-cell_3a_0']], [])
    >>> shown["cell:0"].severity, shown["cell:"].severity, shown["cell:"].inner_severity
    ('warning', None, 'warning')
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphaudit.draw.collapse import ROLLUP_KINDS, ROLLUP_PREFIX, Plan
from graphaudit.draw.style import human_count, svg_id
from graphaudit.draw.tree import Tree
from graphaudit.findings import Finding, severity_rank

__all__ = ["MAX_TOOLTIP_FINDINGS", "TIMES", "Shown", "mark", "shown_items"]

MAX_TOOLTIP_FINDINGS = 8
TIMES = "\u00d7"  # multiplication sign, as in "Bottleneck x6"


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
    inner_severity: str | None = None  # worst severity found inside a cluster
    why: str = ""  # why a parameter is drawn (Item.why), for the legend

    @property
    def severity(self) -> str | None:
        return min(self.checks.values(), key=severity_rank) if self.checks else None


def shown_items(tree: Tree, plan: Plan) -> dict[str, Shown]:
    """Every box *plan* draws, by key, parents before children and children in tree order.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.collapse import plan
        >>> from graphaudit.draw.tree import build_tree
        >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()])))
        >>> {key: (entry.kind, entry.children) for key, entry in shown_items(tree, plan(tree, depth=0)).items()}
        {'cell:': ('collapsed', [])}
    """
    shown: dict[str, Shown] = {}
    inside: dict[str, int] = {}
    for key in tree.items:
        target = plan.drawn[key]
        if target != key:
            inside[target] = inside.get(target, 0) + 1
    for key, item in tree.items.items():
        if plan.drawn[key] != key:
            continue
        parent = plan.drawn[item.parent] if item.parent is not None else None
        shown[key] = Shown(key, item.kind, list(item.label), list(item.tooltip), parent, why=item.why)
        if item.children and all(plan.drawn[c] == key for c in item.children):
            shown[key].kind = "collapsed"
            shown[key].label.append(f"({inside[key]} nodes inside)")
    for box, (run, count) in plan.rollups.items():
        blocks = [tree.items[k] for k in run if tree.items[k].kind in ROLLUP_KINDS]
        first, last = blocks[0], blocks[-1]
        parent = plan.drawn[first.parent] if first.parent is not None else None
        total = sum(block.params for block in blocks)
        label = [f"{first.cls} {TIMES}{count}", f"{first.label[0]} … {last.label[0]}"]
        if total:
            label.append(f"{human_count(total)} params")
        tooltip = [f"{count} consecutive {first.cls} blocks of the same structure", *label[1:]]
        shown[box] = Shown(box, "rollup", label, tooltip, parent)
    for key, entry in shown.items():
        if entry.parent is not None:
            shown[entry.parent].children.append(key)
    rank = {key: i for i, key in enumerate(tree.items)}
    for entry in shown.values():  # a roll-up box sits where its first block was
        entry.children.sort(key=lambda k: rank[k[len(ROLLUP_PREFIX) :] if k.startswith(ROLLUP_PREFIX) else k])
    return shown


def _note(entry: Shown, finding: Finding) -> None:
    if len(entry.notes) >= 2 * MAX_TOOLTIP_FINDINGS:
        return
    head = f"{finding.check_id} {finding.name} [{finding.severity}] {finding.subject}".replace("  ", " ")
    entry.notes.append(head.strip())
    if finding.message:
        entry.notes.append(f"  {finding.message} Fix: {finding.fix}")


def _worse(old: str | None, new: str) -> bool:
    return old is None or severity_rank(new) < severity_rank(old)


def mark(
    tree: Tree, plan: Plan, shown: dict[str, Shown], findings: list[Finding]
) -> tuple[list[list[str]], list[Finding]]:
    """Mark *findings* on the boxes that show their nodes (collapsing never hides one).

    Returns, for each finding, the SVG ids of the boxes that show it, and the findings
    whose nodes are not drawn at all.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.collapse import plan
        >>> from graphaudit.draw.tree import build_tree
        >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
        >>> chosen = plan(tree, depth=0)  # the Dense is inside the network's box
        >>> shown = shown_items(tree, chosen)
        >>> lost = Finding("GA900", "x", "info", "gone", "m", "f", ("cell:gone",))
        >>> mark(tree, chosen, shown, [Finding("GA900", "x", "error", "0", "m", "f", ("cell:0",)), lost])
        ([['ga-cell_3a_'], []], [Finding(check_id='GA900', name='x', severity='info', subject='gone', message='m', fix='f', nodes=('cell:gone',), subjects=('gone',), confirmed_by=())])
        >>> shown["cell:"].checks
        {'GA900': 'error'}
    """
    targets: list[list[str]] = []
    unplaced: list[Finding] = []
    for finding in findings:
        keys = [plan.drawn[k] for node in finding.nodes for k in tree.represents.get(node, [])]
        keys = list(dict.fromkeys(keys))
        targets.append([svg_id(k) for k in keys])
        if not keys:
            unplaced.append(finding)
        for key in keys:
            entry = shown[key]
            if _worse(entry.checks.get(finding.check_id), finding.severity):
                entry.checks[finding.check_id] = finding.severity
            _note(entry, finding)
            parent = entry.parent
            while parent is not None:
                above = shown[parent]
                if _worse(above.inner_severity, finding.severity):
                    above.inner_severity = finding.severity
                parent = above.parent
    return targets, unplaced

"""DOT source for a captured graph: nested clusters, data flow, shared weights, findings.

Every string that comes from the network (cell paths, CellDict keys, parameter names,
finding messages) is escaped with :func:`graphaudit.draw.style.text`; every DOT and SVG id
is derived from a graph node id by :func:`graphaudit.draw.style.svg_id`.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> dot = to_dot(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
    >>> dot.splitlines()[0], '"ga-cell_3a_0" [id="ga-cell_3a_0"' in dot
    ('digraph graphaudit {', True)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

import networkx as nx

from graphaudit.draw.collapse import ROLLUP_KINDS, ROLLUP_PREFIX, Plan, choose_plan
from graphaudit.draw.style import (
    EDGE_STYLES,
    KIND_COLORS,
    SEVERITY_COLORS,
    SEVERITY_FILLS,
    clip,
    human_count,
    quote,
    svg_id,
)
from graphaudit.draw.tree import Tree, build_tree, finding_ids
from graphaudit.findings import SEVERITIES, Finding, severity_rank

__all__ = ["Drawing", "draw", "to_dot"]

MAX_TOOLTIP_FINDINGS = 8
TIMES = "\u00d7"  # multiplication sign, as in "Bottleneck x6"
EDGE_LABEL_LIMIT = 600  # drawings with more nodes get no edge labels unless asked
SHAPES = {
    "call": "box",
    "cell": "box",
    "weights": "component",
    "op": "ellipse",
    "parameter": "note",
    "input": "invhouse",
    "output": "house",
    "collapsed": "box3d",
    "rollup": "box3d",
}
LEGEND = {
    "cell": "cell",
    "call": "cell call",
    "weights": "weights used by several calls",
    "op": "operation",
    "parameter": "parameter (shared)",
    "input": "input / output",
    "collapsed": "collapsed cluster",
    "rollup": "rolled-up repeated blocks",
}


@dataclass
class Drawing:
    """DOT source, and for each finding the SVG ids of the nodes or clusters that show it."""

    dot: str
    findings: list[Finding]
    targets: list[list[str]]
    plan: Plan
    view: str
    unplaced: list[Finding] = field(default_factory=list)
    title: str = ""


@dataclass
class _Shown:
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

    @property
    def severity(self) -> str | None:
        return min(self.checks.values(), key=severity_rank) if self.checks else None


def findings_from_graph(graph: nx.MultiDiGraph) -> list[Finding]:
    """Findings rebuilt from the ``findings`` / ``severity`` node attributes of a report's graph.

    Example:
        >>> import networkx as nx
        >>> graph = nx.MultiDiGraph()
        >>> graph.add_node("cell:a", kind="cell", path="a", findings='["GA101"]', severity="error")
        >>> [(f.check_id, f.severity, f.nodes) for f in findings_from_graph(graph)]
        [('GA101', 'error', ('cell:a',))]
    """
    found = []
    for node, attrs in graph.nodes(data=True):
        for check_id in finding_ids(attrs):
            subject = attrs.get("path") or attrs.get("name") or node
            found.append(Finding(check_id, "", attrs.get("severity", "info"), subject, "", "", (node,)))
    return sorted(found, key=Finding.sort_key)


def _shown(tree: Tree, plan: Plan) -> dict[str, _Shown]:
    shown: dict[str, _Shown] = {}
    inside: dict[str, int] = {}
    for key in tree.items:
        target = plan.drawn[key]
        if target != key:
            inside[target] = inside.get(target, 0) + 1
    for key, item in tree.items.items():
        if plan.drawn[key] != key:
            continue
        parent = plan.drawn[item.parent] if item.parent is not None else None
        shown[key] = _Shown(key, item.kind, list(item.label), list(item.tooltip), parent)
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
        shown[box] = _Shown(box, "rollup", label, tooltip, parent)
    for key, entry in shown.items():  # children in tree order
        if entry.parent is not None:
            shown[entry.parent].children.append(key)
    return shown


def _order_children(tree: Tree, shown: dict[str, _Shown]) -> None:
    rank = {key: i for i, key in enumerate(tree.items)}
    for entry in shown.values():
        entry.children.sort(key=lambda k: rank[k[len(ROLLUP_PREFIX) :] if k.startswith(ROLLUP_PREFIX) else k])


def _mark(
    tree: Tree, plan: Plan, shown: dict[str, _Shown], findings: list[Finding]
) -> tuple[list[list[str]], list[Finding]]:
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
            old = entry.checks.get(finding.check_id)
            if old is None or severity_rank(finding.severity) < severity_rank(old):
                entry.checks[finding.check_id] = finding.severity
            if len(entry.notes) < 2 * MAX_TOOLTIP_FINDINGS:
                head = f"{finding.check_id} {finding.name} [{finding.severity}] {finding.subject}".replace(
                    "  ", " "
                )
                entry.notes.append(head.strip())
                if finding.message:
                    entry.notes.append(f"  {finding.message} Fix: {finding.fix}")
            parent = entry.parent
            while parent is not None:
                above = shown[parent]
                if above.inner_severity is None or severity_rank(finding.severity) < severity_rank(
                    above.inner_severity
                ):
                    above.inner_severity = finding.severity
                parent = above.parent
    return targets, unplaced


def _attrs(entry: _Shown, cluster: bool) -> list[str]:
    ident = svg_id(entry.key)
    severity = entry.severity
    classes = [f"ga-{entry.kind}"]
    if severity:
        classes += ["ga-flagged", f"ga-sev-{severity}", *(f"ga-check-{c}" for c in sorted(entry.checks))]
    label = [clip(line) for line in entry.label]
    if entry.checks:
        label.append("[" + " ".join(sorted(entry.checks)) + "]")
    tooltip = entry.tooltip + entry.notes
    attrs = [
        f'id="{ident}"',
        f'class="{" ".join(classes)}"',
        f"label={quote(*label)}",
        f"tooltip={quote(*tooltip)}",
    ]
    if cluster:
        attrs.append(f'fillcolor="{KIND_COLORS["cluster"]}"')
        color = severity or entry.inner_severity
        if color:
            attrs += [f'color="{SEVERITY_COLORS[color]}"', f"penwidth={2.5 if severity else 1.5}"]
        return attrs
    fill = SEVERITY_FILLS[severity] if severity else KIND_COLORS.get(entry.kind, KIND_COLORS["call"])
    attrs.append(f'fillcolor="{fill}"')
    if SHAPES.get(entry.kind, "box") != "box":
        attrs.append(f"shape={SHAPES[entry.kind]}")
    if severity:
        attrs += [f'color="{SEVERITY_COLORS[severity]}"', "penwidth=2.5"]
    if entry.kind == "cell" and "never called" in " ".join(entry.label):
        attrs.append('style="rounded,filled,dashed"')
    return attrs


def _emit(key: str, shown: dict[str, _Shown], lines: list[str], indent: str) -> None:
    entry = shown[key]
    if entry.children:
        lines.append(f'{indent}subgraph "cluster_{svg_id(key)}" {{')
        lines += [f"{indent}  {attr};" for attr in _attrs(entry, cluster=True)]
        for child in entry.children:
            _emit(child, shown, lines, indent + "  ")
        lines.append(f"{indent}}}")
    else:
        lines.append(f'{indent}"{svg_id(key)}" [{", ".join(_attrs(entry, cluster=False))}];')


def _leaf(shown: dict[str, _Shown], key: str, last: bool = False) -> str:
    while shown[key].children:
        key = shown[key].children[-1 if last else 0]
    return key


def _inside(shown: dict[str, _Shown], key: str, cluster: str) -> bool:
    while key is not None:
        if key == cluster:
            return True
        key = shown[key].parent  # type: ignore[assignment]
    return False


def _edges(tree: Tree, plan: Plan, shown: dict[str, _Shown], labels: bool) -> list[str]:
    merged: dict[tuple[str, str, str], list[str]] = {}
    for edge in tree.edges:
        src, dst = plan.drawn[edge.src], plan.drawn[edge.dst]
        if src != dst:
            found = merged.setdefault((src, dst, edge.kind), [])
            if edge.label and edge.label not in found:
                found.append(edge.label)
    if tree.view == "structure":  # stack siblings top to bottom
        for entry in [None, *shown.values()]:
            children = entry.children if entry else [k for k, e in shown.items() if e.parent is None]
            for a, b in zip(children, children[1:]):
                merged.setdefault((a, b, "order"), [])
    lines = []
    for (src, dst, kind), found in merged.items():
        attrs = []
        tail, head = _leaf(shown, src, last=True), _leaf(shown, dst)
        if kind != "order":
            if tail != src and not _inside(shown, dst, src):
                attrs.append(f'ltail="cluster_{svg_id(src)}"')
            if head != dst and not _inside(shown, src, dst):
                attrs.append(f'lhead="cluster_{svg_id(dst)}"')
        if labels and found:
            attrs.append(f"label={quote(*found[:3], *(['…'] if len(found) > 3 else []))}")
        attrs.append(EDGE_STYLES[kind])
        lines.append(f'  "{svg_id(tail)}" -> "{svg_id(head)}" [{", ".join(attrs)}];')
    return lines


def _legend(shown: dict[str, _Shown]) -> list[str]:
    kinds = {("input" if e.kind == "output" else e.kind) for e in shown.values() if not e.children}
    severities = {e.severity for e in shown.values()} | {e.inner_severity for e in shown.values()}
    lines = [
        '  subgraph "cluster_ga-legend" {',
        '    id="ga-legend"; label="legend"; fillcolor="#ffffff"; fontsize=9;',
    ]
    keys = []
    for kind, text in LEGEND.items():
        if kind in kinds:
            shape = SHAPES[kind]
            extra = f", shape={shape}" if shape != "box" else ""
            keys.append(f"ga-legend-{kind}")
            lines.append(f'    "ga-legend-{kind}" [label="{text}", fillcolor="{KIND_COLORS[kind]}"{extra}];')
    for severity in SEVERITIES:
        if severity in severities:
            keys.append(f"ga-legend-{severity}")
            lines.append(
                f'    "ga-legend-{severity}" [label="{severity} finding [check ID]", fillcolor="{SEVERITY_FILLS[severity]}", '
                f'color="{SEVERITY_COLORS[severity]}", penwidth=2.5];'
            )
    lines.append("    {rank=same; " + " ".join(f'"{key}";' for key in keys) + "}")
    lines += [f'    "{a}" -> "{b}" [style=invis];' for a, b in zip(keys, keys[1:])]
    lines.append("  }")
    return lines


def draw(
    graph: nx.MultiDiGraph,
    findings: Iterable[Finding] = (),
    *,
    view: str = "auto",
    depth: int | None = None,
    params: str = "shared",
    rollup: bool | None = None,
    max_nodes: int = 1500,
    rollup_threshold: int = 400,
    edge_labels: bool | None = None,
    legend: bool = True,
    title: str | None = None,
) -> Drawing:
    """Everything :func:`to_dot` knows, plus where each finding is drawn.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> block = nn.Dense(2, 2)
        >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
        >>> drawing = draw(report.graph, report.findings)
        >>> [f.check_id for f in drawing.findings], drawing.targets
        (['GA101'], [['ga-cell_3a_0', 'ga-cell_3a_']])
    """
    findings = sorted(findings, key=Finding.sort_key) or findings_from_graph(graph)
    flagged = {node for f in findings for node in f.nodes}
    tree = build_tree(graph, view=view, params=params, flagged=flagged)
    chosen = choose_plan(
        tree, depth=depth, rollup=rollup, max_nodes=max_nodes, rollup_threshold=rollup_threshold
    )
    shown = _shown(tree, chosen)
    _order_children(tree, shown)
    targets, unplaced = _mark(tree, chosen, shown, findings)
    heading = [f"{title or tree.title or 'network'} ({tree.view} view)", *chosen.notes]
    heading += [f"not drawn: {f.check_id} {f.subject}" for f in unplaced]
    lines = [
        "digraph graphaudit {",
        f"  graph [compound=true, rankdir=TB, nodesep=0.3, ranksep=0.35, "
        f'fontname="Helvetica", fontsize=12, labelloc=t, style="rounded,filled", color="#9aa5b1", '
        f"label={quote(*heading)}];",
        '  node [shape=box, style="rounded,filled", fontname="Helvetica", fontsize=10, color="#5f6b7a", penwidth=1];',
        '  edge [fontname="Helvetica", fontsize=8, arrowsize=0.6];',
    ]
    for key, entry in shown.items():
        if entry.parent is None:
            _emit(key, shown, lines, "  ")
    labels = chosen.count <= EDGE_LABEL_LIMIT if edge_labels is None else edge_labels
    lines += _edges(tree, chosen, shown, labels)
    if legend:
        lines += _legend(shown)
    lines.append("}")
    return Drawing(
        "\n".join(lines) + "\n", list(findings), targets, chosen, tree.view, unplaced, title or tree.title
    )


def to_dot(
    graph: nx.MultiDiGraph,
    findings: Iterable[Finding] = (),
    *,
    view: str = "auto",
    depth: int | None = None,
    params: str = "shared",
    rollup: bool | None = None,
    max_nodes: int = 1500,
    rollup_threshold: int = 400,
    edge_labels: bool | None = None,
    legend: bool = True,
    title: str | None = None,
) -> str:
    """Graphviz DOT source drawing *graph*, with *findings* marked on their nodes.

    *view*: ``"traced"`` (calls and operations nested by cell, the data flow with shapes;
    the default when the graph was captured with ``inputs``) or ``"structure"`` (the cell
    tree). *depth*: clusters deeper than this are drawn as one box. *params*: ``"shared"``
    (draw only parameters used by several cells, each once, linked to every user),
    ``"all"`` or ``"none"``; a parameter with a finding is always drawn. *rollup*: merge
    runs of sibling blocks of one class and structure into one box (``None``: only above
    *rollup_threshold* drawn nodes). Above *max_nodes* drawn nodes the depth is lowered
    until the drawing fits, and the title says so. With no *findings*, those a
    :class:`~graphaudit.report.Report` attached to the graph's nodes are shown.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(2, 2)])
        >>> dot = to_dot(graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 2), np.float32))))
        >>> print([line.strip() for line in dot.splitlines() if "->" in line][0])
        "ga-input_3a_0" -> "ga-call_3a_0_23_1" [label="[1, 2]", color="#444444"];
    """
    options = {"view": view, "depth": depth, "params": params, "rollup": rollup, "max_nodes": max_nodes}
    options |= {
        "rollup_threshold": rollup_threshold,
        "edge_labels": edge_labels,
        "legend": legend,
        "title": title,
    }
    return draw(graph, findings, **options).dot


def findings_json(drawing: Drawing) -> str:
    """The findings of a drawing with their SVG targets, as JSON (used by the HTML report).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> json.loads(findings_json(draw(graphaudit.to_networkx(nn.Dense(2, 2)))))
        []
    """
    rows = [{**f.to_dict(), "targets": t} for f, t in zip(drawing.findings, drawing.targets)]
    return json.dumps(rows, ensure_ascii=False)

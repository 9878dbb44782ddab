"""DOT source for a captured graph: nested clusters, data flow, shared weights, findings.

The DOT is built with the ``graphviz`` package (:class:`graphviz.Digraph`, one
``subgraph`` named ``cluster_<id>`` per cluster), which quotes every ID and attribute
value. Every string that comes from the network (cell paths, CellDict keys, parameter
names, finding messages) is first made literal by :func:`graphaudit.draw.style.text`;
every DOT and SVG id is derived from a graph node id by :func:`graphaudit.draw.style.svg_id`.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> dot = to_dot(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
    >>> print(dot.splitlines()[0])
    digraph graphaudit {
    >>> print(next(line.strip() for line in dot.splitlines() if 'id="ga-cell_3a_0"' in line)[:49])
    "ga-cell_3a_0" [id="ga-cell_3a_0" class="ga-cell"
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass, field

import graphviz
import networkx as nx

from graphaudit.draw.collapse import Plan, choose_plan
from graphaudit.draw.legend import SHAPES, add_legend
from graphaudit.draw.marks import Shown, mark, shown_items
from graphaudit.draw.style import (
    EDGE_STYLES,
    KIND_COLORS,
    NODE_BORDER,
    PLAIN_BORDER,
    SEVERITY_COLORS,
    SEVERITY_FILLS,
    clip,
    label,
    svg_id,
    tooltip,
)
from graphaudit.draw.tree import Tree, build_tree, finding_ids
from graphaudit.findings import Finding

__all__ = ["Drawing", "draw", "findings_from_graph", "findings_json", "to_dot"]

EDGE_LABEL_LIMIT = 600  # drawings with more nodes get no edge labels unless asked
Attrs = list[tuple[str, str]]


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


def _common(entry: Shown) -> Attrs:
    """id, classes, label and tooltip: what every node and cluster carries."""
    classes = [f"ga-{entry.kind}"]
    if entry.severity:
        classes += [
            "ga-flagged",
            f"ga-sev-{entry.severity}",
            *(f"ga-check-{c}" for c in sorted(entry.checks)),
        ]
    lines = [clip(line) for line in entry.label]
    if entry.checks:
        lines.append("[" + " ".join(sorted(entry.checks)) + "]")
    return [
        ("id", svg_id(entry.key)),
        ("class", " ".join(classes)),
        ("label", label(*lines)),
        ("tooltip", tooltip(*entry.tooltip, *entry.notes)),
    ]


def _cluster_attrs(entry: Shown) -> Attrs:
    # Graphviz hands a subgraph's color and penwidth down to the clusters inside it, so each
    # cluster sets its own border, plain or not: a box inside a flagged one stays innocent.
    color, width = PLAIN_BORDER, "1"
    if entry.severity:
        color, width = SEVERITY_COLORS[entry.severity], "2.5"
    elif entry.inner_severity:
        color, width = SEVERITY_COLORS[entry.inner_severity], "1.5"
    return [*_common(entry), ("fillcolor", KIND_COLORS["cluster"]), ("color", color), ("penwidth", width)]


def _node_attrs(entry: Shown) -> Attrs:
    severity = entry.severity
    fill = SEVERITY_FILLS[severity] if severity else KIND_COLORS.get(entry.kind, KIND_COLORS["call"])
    attrs = [*_common(entry), ("fillcolor", fill)]
    if SHAPES.get(entry.kind, "box") != "box":
        attrs.append(("shape", SHAPES[entry.kind]))
    if severity:
        attrs += [("color", SEVERITY_COLORS[severity]), ("penwidth", "2.5")]
    if entry.kind == "cell" and "never called" in " ".join(entry.label):
        attrs.append(("style", "rounded,filled,dashed"))
    return attrs


def _emit(dot: graphviz.Digraph, key: str, shown: dict[str, Shown]) -> None:
    entry = shown[key]
    if not entry.children:
        dot.node(svg_id(key), _attributes=_node_attrs(entry))
        return
    with dot.subgraph(name=f"cluster_{svg_id(key)}") as cluster:
        cluster.attr("graph", _attributes=_cluster_attrs(entry))
        for child in entry.children:
            _emit(cluster, child, shown)


def _leaf(shown: dict[str, Shown], key: str, last: bool = False) -> str:
    while shown[key].children:
        key = shown[key].children[-1 if last else 0]
    return key


def _inside(shown: dict[str, Shown], key: str | None, cluster: str) -> bool:
    while key is not None:
        if key == cluster:
            return True
        key = shown[key].parent
    return False


def _edges(dot: graphviz.Digraph, tree: Tree, plan: Plan, shown: dict[str, Shown], labels: bool) -> None:
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
    for (src, dst, kind), found in merged.items():
        attrs: Attrs = []
        # An edge to or from a cluster is drawn between leaves and clipped at the border.
        tail, head = _leaf(shown, src, last=True), _leaf(shown, dst)
        if kind != "order":
            if tail != src and not _inside(shown, dst, src):
                attrs.append(("ltail", f"cluster_{svg_id(src)}"))
            if head != dst and not _inside(shown, src, dst):
                attrs.append(("lhead", f"cluster_{svg_id(dst)}"))
        if labels and found:
            attrs.append(("label", label(*found[:3], *(["…"] if len(found) > 3 else []))))
        attrs += EDGE_STYLES[kind]
        dot.edge(svg_id(tail), svg_id(head), _attributes=attrs)


def _digraph(heading: list[str]) -> graphviz.Digraph:
    dot = graphviz.Digraph("graphaudit")
    dot.attr(
        "graph",
        _attributes=[
            ("compound", "true"),
            ("rankdir", "TB"),
            ("nodesep", "0.3"),
            ("ranksep", "0.35"),
            ("fontname", "Helvetica"),
            ("fontsize", "12"),
            ("labelloc", "t"),
            ("style", "rounded,filled"),
            ("color", PLAIN_BORDER),
            ("label", label(*heading)),
        ],
    )
    dot.attr(
        "node",
        _attributes=[
            ("shape", "box"),
            ("style", "rounded,filled"),
            ("fontname", "Helvetica"),
            ("fontsize", "10"),
            ("color", NODE_BORDER),
            ("penwidth", "1"),
        ],
    )
    dot.attr("edge", _attributes=[("fontname", "Helvetica"), ("fontsize", "8"), ("arrowsize", "0.6")])
    return dot


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
    shown = shown_items(tree, chosen)
    targets, unplaced = mark(tree, chosen, shown, findings)
    heading = [f"{title or tree.title or 'network'} ({tree.view} view)", *chosen.notes]
    heading += [f"not drawn: {f.check_id} {f.subject}" for f in unplaced]
    dot = _digraph(heading)
    if legend:
        add_legend(dot, shown, tree.view)
    for key, entry in shown.items():
        if entry.parent is None:
            _emit(dot, key, shown)
    _edges(dot, tree, chosen, shown, chosen.count <= EDGE_LABEL_LIMIT if edge_labels is None else edge_labels)
    return Drawing(dot.source, list(findings), targets, chosen, tree.view, unplaced, title or tree.title)


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
        >>> print([line.strip() for line in dot.splitlines() if "->" in line and "ga-legend" not in line][0])
        "ga-input_3a_0" -> "ga-call_3a_0_23_1" [label="[1, 2]" color="#444444"]
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
        >>> block = nn.Dense(2, 2)
        >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
        >>> [(row["check_id"], row["targets"]) for row in json.loads(findings_json(draw(report.graph, report.findings)))]
        [('GA101', ['ga-cell_3a_0', 'ga-cell_3a_'])]
    """
    rows = [{**f.to_dict(), "targets": t} for f, t in zip(drawing.findings, drawing.targets)]
    return json.dumps(rows, ensure_ascii=False)

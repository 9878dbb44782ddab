"""DOT source for a captured graph: nested clusters, data flow, shared weights, findings, the loss.

Every attribute list is written by the ``graphviz`` package's quoting
(:func:`graphviz.quoting.attr_list`), which quotes every ID and value. Every string that
comes from the network (cell paths, CellDict keys, parameter names, finding messages) is
first made literal by :func:`graphaudit.draw.style.text`; every DOT and SVG id is derived
from a graph node id by :func:`graphaudit.draw.style.svg_id`. The body (which box sits in
which cluster, the edges between drawn boxes) is assembled by :func:`body` from those
attribute lists; the HTML explorer's script assembles it the same way, line for line, for
whatever the reader has expanded (``assets/explorer.js``, ``buildDot``).

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

import inspect
import json
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import graphviz
import networkx as nx

from graphaudit.draw.build import build_tree
from graphaudit.draw.collapse import ROLLUP_PREFIX, Plan, Run, choose_plan, runs_of
from graphaudit.draw.divergence import Divergence, shaded
from graphaudit.draw.legend import SHAPES, add_legend
from graphaudit.draw.marks import Marks, Shown, mark_items, shown_items, targets
from graphaudit.draw.style import (
    EDGE_STYLES,
    KIND_COLORS,
    NODE_BORDER,
    PLAIN_BORDER,
    SEVERITY_COLORS,
    SEVERITY_FILLS,
    SEVERITY_WIDTHS,
    clip,
    dot_text,
    label,
    svg_id,
    tooltip,
)
from graphaudit.draw.tree import Loss, Tree, finding_ids
from graphaudit.findings import Finding

__all__ = [
    "Drawing",
    "attr_text",
    "body",
    "digraph",
    "draw",
    "findings_from_graph",
    "findings_json",
    "to_dot",
]

EDGE_LABEL_LIMIT = 600  # drawings with more nodes get no edge labels unless asked
CHECKS_LINE = 48  # the check IDs go on a label's last line when that line stays this short
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
    tree: Tree | None = field(default=None, repr=False)
    marks: Marks | None = field(default=None, repr=False)
    runs: dict[str, Run] = field(default_factory=dict, repr=False)
    labels: bool | None = None  # edge_labels as asked
    reference: Divergence | None = field(default=None, repr=False)  # a port's comparison, when drawn


def findings_from_graph(graph: nx.MultiDiGraph) -> list[Finding]:
    """Findings rebuilt from the ``findings`` / ``severity`` node attributes of an annotated graph.

    An annotated graph is :meth:`graphaudit.Report.annotated`'s copy (read back from GraphML,
    say); ``to_dot(graph, findings_from_graph(graph))`` draws it marked again.

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
    if entry.shade is not None:  # against the original: what the page's script and tests select
        classes += entry.shade.classes(entry.first)
    lines = [clip(line) for line in entry.label]
    if entry.checks:  # on the last line when it fits there: one line less in height
        tag = "[" + " ".join(sorted(entry.checks)) + "]"
        if lines and len(lines[-1]) + 1 + len(tag) <= CHECKS_LINE:
            lines[-1] += " " + tag
        else:
            lines.append(tag)
    return [
        ("id", svg_id(entry.key)),
        ("class", " ".join(classes)),
        ("label", label(*lines)),
        ("tooltip", tooltip(*entry.tooltip, *entry.notes)),
    ]


def cluster_attrs(entry: Shown) -> Attrs:
    # Graphviz hands a subgraph's color and penwidth down to the clusters inside it, so each
    # cluster sets its own border, plain or not: a box inside a flagged one stays innocent.
    # A cluster is coloured only for a finding about it (and then shows its ID), never for
    # one inside it: the flagged box inside is drawn, coloured and labelled, already.
    color, width = PLAIN_BORDER, "1"
    if entry.severity:
        color, width = SEVERITY_COLORS[entry.severity], SEVERITY_WIDTHS[entry.severity]
    attrs = [*_common(entry), ("fillcolor", KIND_COLORS["cluster"]), ("color", color), ("penwidth", width)]
    return attrs if entry.shade is None else shaded(attrs, entry.shade, entry.first, cluster=True)


def node_attrs(entry: Shown) -> Attrs:
    severity = entry.severity
    fill = SEVERITY_FILLS[severity] if severity else KIND_COLORS.get(entry.kind, KIND_COLORS["call"])
    attrs = [*_common(entry), ("fillcolor", fill)]
    if SHAPES.get(entry.kind, "box") != "box":
        attrs.append(("shape", SHAPES[entry.kind]))
    if severity:
        attrs += [("color", SEVERITY_COLORS[severity]), ("penwidth", SEVERITY_WIDTHS[severity])]
    if entry.kind == "cell" and "never called" in " ".join(entry.label):
        attrs.append(("style", "rounded,filled,dashed"))
    return attrs if entry.shade is None else shaded(attrs, entry.shade, entry.first)


def attr_text(entry: Shown) -> str:
    """The attribute list of *entry* as DOT (`` [id=... label=...]``), written by the ``graphviz`` package."""
    attrs = cluster_attrs(entry) if entry.form == "cluster" else node_attrs(entry)
    return graphviz.quoting.attr_list(attributes=attrs)


#: Each edge kind's attributes, as DOT text.
EDGE_TEXT = {kind: graphviz.quoting.a_list(attributes=list(style)) for kind, style in EDGE_STYLES.items()}


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


def top_level(tree: Tree, shown: dict[str, Shown]) -> list[str]:
    rank = {key: i for i, key in enumerate(tree.items)}
    top = [k for k, e in shown.items() if e.parent is None]
    return sorted(top, key=lambda k: rank[k[len(ROLLUP_PREFIX) :] if k.startswith(ROLLUP_PREFIX) else k])


def body(tree: Tree, plan: Plan, shown: dict[str, Shown], labels: bool) -> list[str]:
    """The lines of the DOT body: every drawn box in its cluster, then the edges between boxes."""
    lines: list[str] = []

    def emit(key: str, indent: str) -> None:
        entry = shown[key]
        ident = svg_id(key)
        if entry.form != "cluster":
            lines.append(f'{indent}"{ident}"{attr_text(entry)}\n')
            return
        lines.append(f'{indent}subgraph "cluster_{ident}" {{\n{indent}\tgraph{attr_text(entry)}\n')
        for child in entry.children:
            emit(child, indent + "\t")
        lines.append(f"{indent}}}\n")

    top = top_level(tree, shown)
    for key in top:
        emit(key, "\t")
    beside = [plan.drawn[e.src] for e in tree.edges if e.kind == "loss"]  # the loss beside its outputs
    if beside and tree.loss is not None:
        ranked = " ".join(f'"{svg_id(k)}"' for k in dict.fromkeys([*beside, tree.loss.key]))
        lines.append(f"\t{{rank=same; {ranked}}}\n")
    merged: dict[tuple[str, str, str], list[str]] = {}
    for edge in tree.edges:
        src, dst = plan.drawn[edge.src], plan.drawn[edge.dst]
        if src != dst:
            found = merged.setdefault((src, dst, edge.kind), [])
            piece = dot_text(edge.label) if edge.label else ""
            if piece and piece not in found:
                found.append(piece)
    if tree.view == "structure":  # stack siblings top to bottom
        for children in [top, *(entry.children for entry in shown.values())]:
            for a, b in zip(children, children[1:]):
                merged.setdefault((a, b, "order"), [])
    for (src, dst, kind), found in merged.items():
        parts = []
        # An edge to or from a cluster is drawn between leaves and clipped at the border.
        tail, head = _leaf(shown, src, last=True), _leaf(shown, dst)
        if kind != "order":
            if tail != src and not _inside(shown, dst, src):
                parts.append(f'ltail="cluster_{svg_id(src)}"')
            if head != dst and not _inside(shown, src, dst):
                parts.append(f'lhead="cluster_{svg_id(dst)}"')
        if labels and found:
            parts.append('label="' + "\\n".join([*found[:3], *(["…"] if len(found) > 3 else [])]) + '"')
        parts.append(EDGE_TEXT[kind])
        lines.append(f'\t"{svg_id(tail)}" -> "{svg_id(head)}" [{" ".join(parts)}]\n')
    return lines


def digraph(heading: list[str] | None) -> graphviz.Digraph:
    """The graph with its default attributes; *heading* is its title (``None``: no title)."""
    dot = graphviz.Digraph("graphaudit")
    graph_attrs = [
        ("compound", "true"),
        ("rankdir", "TB"),
        ("nodesep", "0.2"),
        ("ranksep", "0.22"),
        ("fontname", "Arial"),
        ("fontsize", "12"),
        ("labelloc", "t"),
        ("style", "rounded,filled"),
        ("color", PLAIN_BORDER),
    ]
    if heading is not None:
        graph_attrs.append(("label", label(*heading)))
    dot.attr("graph", _attributes=graph_attrs)
    dot.attr(
        "node",
        _attributes=[
            ("shape", "box"),
            ("style", "rounded,filled"),
            ("fontname", "Arial"),
            ("fontsize", "10"),
            ("height", "0.3"),
            ("margin", "0.1,0.04"),
            ("color", NODE_BORDER),
            ("penwidth", "1"),
        ],
    )
    dot.attr("edge", _attributes=[("fontname", "Arial"), ("fontsize", "8"), ("arrowsize", "0.6")])
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
    loss: Loss | str | None = None,
    repeats: bool = False,
    reference: Divergence | None = None,
) -> Drawing:
    """Everything :func:`to_dot` knows, plus where each finding is drawn.

    *reference* (a port's comparison with its original, :class:`~graphaudit.draw.divergence.Divergence`)
    colours each compared cell by its divergence, outlines the first diverging one and greys
    the cells not compared; without it the drawing is what it always was.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> block = nn.Dense(2, 2)
        >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
        >>> drawing = draw(report.graph, report.findings)
        >>> [f.check_id for f in drawing.findings], drawing.targets
        (['GA101'], [['ga-cell_3a_0', 'ga-cell_3a_']])
    """
    findings = sorted(findings, key=Finding.sort_key)
    flagged = {node for f in findings for node in f.nodes}
    if isinstance(loss, str):
        loss = Loss(loss)
    tree = build_tree(graph, view=view, params=params, flagged=flagged, loss=loss)
    runs = runs_of(tree) if rollup is not False else {}
    chosen = choose_plan(
        tree,
        depth=depth,
        rollup=rollup,
        max_nodes=max_nodes,
        rollup_threshold=rollup_threshold,
        repeats=repeats,
    )
    marks = mark_items(tree, findings, reference)
    shown = shown_items(tree, chosen, marks, runs)
    found, unplaced = targets(marks, chosen)
    heading = [f"{title or tree.title or 'network'} ({tree.view} view)", *chosen.notes]
    heading += [f"not drawn: {f.check_id} {f.subject}" for f in unplaced]
    dot = digraph(heading)
    if legend:
        add_legend(dot, shown, tree.view)
    labels = chosen.count <= EDGE_LABEL_LIMIT if edge_labels is None else edge_labels
    source = dot.source[: -len("}\n")] + "".join(body(tree, chosen, shown, labels)) + "}\n"
    drawing = Drawing(source, list(findings), found, chosen, tree.view, unplaced, title or tree.title)
    drawing.tree, drawing.marks, drawing.runs, drawing.labels = tree, marks, runs, edge_labels
    drawing.reference = reference
    return drawing


def to_dot(graph: nx.MultiDiGraph, findings: Iterable[Finding] = (), **options: Any) -> str:
    """Graphviz DOT source drawing *graph*, with *findings* marked on their nodes.

    *view*: ``"traced"`` (calls and operations nested by cell, the data flow with shapes;
    the default when the graph was captured with ``inputs``) or ``"structure"`` (the cell
    tree). *depth*: clusters deeper than this are drawn as one box. *params*: ``"shared"``
    (draw only parameters used by several cells, each once, linked to every user),
    ``"all"`` or ``"none"``; a parameter with a finding is always drawn. *rollup*: merge
    runs of sibling blocks of one class and structure into one box (``None``: only above
    *rollup_threshold* drawn nodes). Above *max_nodes* drawn nodes the depth is lowered
    until the drawing fits, and the title says so. The later calls of a cell called several
    times are one closed box each (their inside is the first call's); *repeats* opens them. *loss* (a :class:`~graphaudit.draw.tree.Loss`
    or its class name) is drawn after the outputs, with the findings about it. *reference*
    (:class:`~graphaudit.draw.divergence.Divergence`) colours the cells by how far each is
    from the original's module. Only *findings*
    are drawn: with none, the graph is drawn unmarked.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(2, 2)])
        >>> dot = to_dot(graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 2), np.float32))))
        >>> print([line.strip() for line in dot.splitlines() if "->" in line and "ga-legend" not in line][0])
        "ga-input_3a_0" -> "ga-call_3a_0_23_1" [label="[1, 2]" color="#444444"]
    """
    return draw(graph, findings, **options).dot


# The drawing options are declared once, by draw(): to_dot takes (and shows) the same.
to_dot.__signature__ = inspect.signature(draw).replace(return_annotation="str")  # type: ignore[attr-defined]


def findings_json(drawing: Drawing) -> str:
    """The findings of a drawing with their SVG targets, as JSON.

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

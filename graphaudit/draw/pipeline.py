"""A data-pipeline graph and its findings, drawn with Graphviz: DOT, SVG, and the ids each finding marks.

The pipeline reads top to bottom, sources first. A ``map`` is a box around its transforms, in
the order they run (a random augmentation dashed and marked ``random``, a Python function
marked ``py``); an edge between steps is labelled with the columns that flow along it. A
step or transform that findings concern (matched by the paths in their subjects, see
:func:`graphaudit.graph.pipeline.findings_on_pipeline`) is filled with its worst severity's
colour, lists the check IDs, and carries the messages in its tooltip: the same colours and
quoting as the network's drawing (:mod:`graphaudit.draw.style`). Like the rest of
:mod:`graphaudit.draw`, this reads a graph and findings, never a report or MindSpore.

The HTML report calls :func:`pipeline_dot` (or :func:`pipeline_svg`) for each of
``Report.datasets`` and :func:`pipeline_targets` to link each finding to what it marks.

Example:
    >>> from graphaudit.findings import Finding
    >>> from graphaudit.graph import pipeline as gp
    >>> graph = gp.new_pipeline_graph("train")
    >>> src = gp.add_step(graph, gp.SOURCE, "ImageFolderDataset", shuffle="none", rows=100)
    >>> batch = gp.add_step(graph, gp.OPERATION, "batch", order=1, batch_size=32, drop_remainder=False)
    >>> gp.add_feed(graph, src, batch)
    >>> found = Finding("GA001", "training-data-not-shuffled", "error", "train/ImageFolderDataset#1", "m", "f")
    >>> dot = pipeline_dot(graph, [found])
    >>> pipeline_targets(graph, [found])
    [['ga-ds_3a_train_2f_ImageFolderDataset_23_1']]
    >>> '[GA001]' in dot.source, dot.source.startswith("digraph")
    (True, True)
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

import graphviz
import networkx as nx

from graphaudit.draw.engine import run_dot
from graphaudit.draw.style import (
    NODE_BORDER,
    PLAIN_BORDER,
    SEVERITY_COLORS,
    SEVERITY_FILLS,
    clip,
    label,
    svg_id,
    tooltip,
)
from graphaudit.findings import Finding, severity_rank
from graphaudit.graph import pipeline as gp

__all__ = ["PIPELINE_COLORS", "pipeline_dot", "pipeline_svg", "pipeline_targets"]

#: Fill colour of each kind of pipeline node (pale, as the network's kinds).
PIPELINE_COLORS = {gp.SOURCE: "#dff2dc", gp.OPERATION: "#dfe9f5", gp.TRANSFORM: "#f2f2f2", "map": "#f8fafc"}
Attrs = list[tuple[str, str]]


def _step_lines(attrs: dict[str, Any]) -> list[str]:
    """What a step's box says: its operation and the parameters that matter for the checks."""
    op = attrs["op"]
    lines = [op if attrs["kind"] == gp.SOURCE else f"{op}()"]
    if attrs["kind"] == gp.SOURCE:
        lines.append(
            f"shuffle: {attrs.get('shuffle', '?')}"
            + (f" ({attrs['sampler']})" if attrs.get("sampler") else "")
        )
        if attrs.get("num_shards", 1) > 1:
            lines.append(f"shard {attrs.get('shard_id', 0)} of {attrs['num_shards']}")
    elif op == "batch":
        lines.append(
            f"batch_size={attrs.get('batch_size', '?')}, drop_remainder={attrs.get('drop_remainder')}"
        )
    elif op == "shuffle":
        lines.append(f"buffer_size={attrs.get('buffer_size', '?')}")
    elif op in ("repeat", "take", "skip"):
        lines.append(f"count={attrs.get('count', '?')}")
    elif op in ("map", "rename", "project"):
        ins = json.loads(attrs.get("input_columns", "[]") or "[]")
        outs = json.loads(attrs.get("output_columns", "[]") or "[]")
        if ins and op != "project":
            lines.append(", ".join(ins) + (f" -> {', '.join(outs)}" if outs and outs != ins else ""))
        elif outs:
            lines.append(", ".join(outs))
    rows = attrs.get("rows", -1)
    if rows >= 0:
        lines.append(f"{rows:,} {'batches' if _after_batch(attrs) else 'rows'}")
    return lines


def _after_batch(attrs: dict[str, Any]) -> bool:
    return bool(attrs.get("_batched"))


def _transform_lines(attrs: dict[str, Any]) -> list[str]:
    params = json.loads(attrs.get("params", "{}") or "{}")
    shown = [f"{k}={_short(v)}" for k, v in params.items() if k in _SHOWN]
    tags = (["random"] if attrs.get("random") else []) + (["py"] if attrs.get("python") else [])
    head = attrs["name"] + (f"  [{', '.join(tags)}]" if tags else "")
    return [head, *(clip(s, 40) for s in shown)]


def _short(value: Any) -> str:
    """A parameter value in a few characters: floats to 4 significant digits."""
    if isinstance(value, float):
        return f"{value:.4g}"
    if isinstance(value, list):
        return "[" + ",".join(_short(v) for v in value) + "]"
    return json.dumps(value)


_SHOWN = ("size", "mean", "std", "rescale", "shift", "prob", "data_type", "num_classes", "padding", "degrees")


def _marks(findings: list[Finding]) -> tuple[str | None, list[str], list[str]]:
    """The worst severity, the check IDs and the tooltip lines of the findings on one node."""
    if not findings:
        return None, [], []
    severity = min((f.severity for f in findings), key=severity_rank)
    ids = sorted({f.check_id for f in findings})
    notes = [f"{f.check_id} {f.name} [{f.severity}]: {f.message}" for f in findings]
    return severity, ids, notes


def _attrs(
    node: str, kind: str, lines: list[str], found: list[Finding], extra: tuple[tuple[str, str], ...] = ()
) -> Attrs:
    severity, ids, notes = _marks(found)
    shown = [clip(line) for line in lines] + ([f"[{' '.join(ids)}]"] if ids else [])
    classes = [f"ga-{kind}"] + (
        ["ga-flagged", f"ga-sev-{severity}", *(f"ga-check-{i}" for i in ids)] if severity else []
    )
    attrs = [
        ("id", svg_id(node)),
        ("class", " ".join(classes)),
        ("label", label(*shown)),
        ("tooltip", tooltip(node[3:], *notes)),
        ("fillcolor", SEVERITY_FILLS[severity] if severity else PIPELINE_COLORS[kind]),
    ]
    if severity:
        attrs += [("color", SEVERITY_COLORS[severity]), ("penwidth", "2.5")]
    return attrs + list(extra)


def _digraph(title: str) -> graphviz.Digraph:
    dot = graphviz.Digraph("graphaudit_pipeline")
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
            ("label", label(title)),
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
    dot.attr(
        "edge",
        _attributes=[
            ("fontname", "Helvetica"),
            ("fontsize", "8"),
            ("arrowsize", "0.6"),
            ("color", "#444444"),
        ],
    )
    return dot


def _ends(graph: nx.MultiDiGraph, node: str) -> tuple[str, str]:
    """The drawn nodes an edge into / out of *node* attaches to (a map's first and last transform)."""
    inside = gp.transforms_of(graph, node)
    return (inside[0], inside[-1]) if inside else (node, node)


def pipeline_dot(
    graph: nx.MultiDiGraph, findings: Iterable[Finding] = (), *, title: str | None = None
) -> graphviz.Digraph:
    """The pipeline *graph* as a :class:`graphviz.Digraph`, with *findings* marked (see the module docstring)."""
    on = gp.findings_on_pipeline(graph, list(findings))
    name = graph.graph.get("pipeline", "dataset")
    dot = _digraph(title or f"data pipeline '{name}'")
    batched = False
    for node, attrs in gp.steps(graph):
        attrs = {**attrs, "_batched": batched or attrs["op"] == "batch"}
        batched = attrs["_batched"]
        inside = gp.transforms_of(graph, node)
        if not inside:
            dot.node(
                svg_id(node), _attributes=_attrs(node, attrs["kind"], _step_lines(attrs), on.get(node, []))
            )
            continue
        severity, ids, notes = _marks(on.get(node, []))
        with dot.subgraph(name=f"cluster_{svg_id(node)}") as cluster:
            lines = _step_lines(attrs) + ([f"[{' '.join(ids)}]"] if ids else [])
            cluster.attr(
                "graph",
                _attributes=[
                    ("id", svg_id(node)),
                    ("class", "ga-operation" + (f" ga-flagged ga-sev-{severity}" if severity else "")),
                    ("label", label(*[clip(line) for line in lines])),
                    ("tooltip", tooltip(node[3:], *notes)),
                    ("style", "rounded,filled"),
                    ("fillcolor", PIPELINE_COLORS["map"]),
                    ("color", SEVERITY_COLORS[severity] if severity else PLAIN_BORDER),
                    ("penwidth", "2.5" if severity else "1"),
                ],
            )
            for t in inside:
                t_attrs = graph.nodes[t]
                style = (("style", "rounded,filled,dashed"),) if t_attrs.get("random") else ()
                cluster.node(
                    svg_id(t),
                    _attributes=_attrs(t, gp.TRANSFORM, _transform_lines(t_attrs), on.get(t, []), style),
                )
            for a, b in zip(inside, inside[1:]):
                cluster.edge(svg_id(a), svg_id(b), _attributes=[("color", "#9aa5b1"), ("arrowsize", "0.4")])
    for src, dst, data in graph.edges(data=True):
        if data["kind"] != gp.FEEDS:
            continue
        tail, head = _ends(graph, src)[1], _ends(graph, dst)[0]
        attrs: Attrs = []
        if tail != src:
            attrs.append(("ltail", f"cluster_{svg_id(src)}"))
        if head != dst:
            attrs.append(("lhead", f"cluster_{svg_id(dst)}"))
        columns = gp.columns_of(graph.nodes[src])
        if columns:
            attrs.append(("label", label(clip(", ".join(columns), 40))))
        dot.edge(svg_id(tail), svg_id(head), _attributes=attrs)
    return dot


def pipeline_targets(graph: nx.MultiDiGraph, findings: Iterable[Finding]) -> list[list[str]]:
    """For each finding, the SVG ids of the pipeline nodes (or map boxes) it is drawn on."""
    found = list(findings)
    on = gp.findings_on_pipeline(graph, found)
    return [sorted(svg_id(node) for node, marked in on.items() if f in marked) for f in found]


def pipeline_svg(
    graph: nx.MultiDiGraph,
    findings: Iterable[Finding] = (),
    *,
    title: str | None = None,
    timeout: float = 60.0,
) -> str:
    """The pipeline drawn as SVG text by Graphviz's ``dot`` (see :func:`pipeline_dot`)."""
    source = pipeline_dot(graph, findings, title=title).source
    return run_dot(source, "svg", timeout=timeout, nodes=graph.number_of_nodes()).decode("utf-8")

"""The closed vocabulary of a data-pipeline graph, its node ids, and the queries on it.

A graph made by :func:`graphaudit.to_networkx` from a ``mindspore.dataset.Dataset`` (or by
:func:`graphaudit.capture.data.pipeline.pipeline_graph`) is a ``networkx.MultiDiGraph`` separate
from the network's graph, with its own kinds. Every node and edge has a ``kind`` from
:data:`PIPELINE_NODE_KINDS` / :data:`PIPELINE_EDGE_KINDS`; every attribute value is a
``str``, ``int``, ``float`` or ``bool`` (lists and dicts as JSON text), so the graph is
written as it is by ``networkx.write_graphml``. The graph attribute ``kind`` is
``"pipeline"`` and ``pipeline`` its name (``"train"``, ``"eval"``, or ``"dataset"``).

Node kinds
----------
``source``
    A leaf of the pipeline, where rows come from (``ImageFolderDataset``, ``MindDataset``,
    ``CSVDataset``, ``NumpySlicesDataset``, ``GeneratorDataset``...). Besides the common
    attributes: ``shuffle`` (how the source orders its rows: ``"global"``, ``"files"``,
    ``"infile"``, ``"partial"``, ``"adaptive"``, ``"none"``, or the random sampler's
    name), ``sampler`` (the sampler's class, ``""`` when none), ``num_shards``,
    ``num_samples`` (0: all), ``location`` (folder or files read, ``""`` for data in memory).
``operation``
    A dataset operation (``map``, ``batch``, ``shuffle``, ``repeat``, ``project``,
    ``rename``, ``concat``, ``zip``, ``take``, ``skip``, ``filter``...), with
    ``batch_size`` / ``drop_remainder`` (batch), ``buffer_size`` (shuffle), ``count``
    (repeat, take, skip), ``input_columns`` / ``output_columns`` (map, rename; JSON lists).
``transform``
    One transform run by a ``map`` (``Decode``, ``Resize``, ``Normalize``, ``HWC2CHW``, a
    Python function...), in order: ``name``, ``index`` (0 for the first of its map),
    ``random`` (a random augmentation), ``python`` (a user Python function), ``columns``.

Common attributes of ``source`` and ``operation`` nodes: ``op`` (``"map"``, or the source's
class name), ``op_type`` (MindSpore's own name in its JSON serialisation, ``""`` when the
pipeline could not be serialised), ``class_name``, ``path``, ``order`` (data-flow order, 0
for the first source), ``columns`` (JSON list of the columns it outputs, ``""`` unknown),
``rows`` (rows, or batches after a batch, per epoch; -1 unknown) and ``params`` (JSON of the
parameters MindSpore serialised). Every node has ``kind``, ``path`` and ``pipeline``.

Edge kinds
----------
``feeds``    source | operation → operation: the rows flow this way; ``index`` is the
             position among the consumer's inputs (for ``zip`` and ``concat``).
``applies``  operation (``map``) → transform; ``index`` is the transform's position.

Ids and paths: an operation is ``<pipeline>/<op>#<n>``, the *n*-th ``op`` from the sources
(``train/map#2``); a transform ``<map path>/<name>`` (``train/map#1/Normalize``, with
``#k`` when a map runs one transform twice); its node id is ``ds:`` + path. A finding
about the pipeline names such paths in its ``subjects``; a finding about a column names
``<pipeline>:<column>`` (``train:image``), shown on the pipeline's last operation.

Example:
    >>> graph = new_pipeline_graph("train")
    >>> source = add_step(graph, SOURCE, "ImageFolderDataset", order=0)
    >>> batch = add_step(graph, OPERATION, "batch", order=1, batch_size=32)
    >>> add_feed(graph, source, batch)
    >>> source, batch, sink_of(graph)
    ('ds:train/ImageFolderDataset#1', 'ds:train/batch#1', 'ds:train/batch#1')
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from typing import Any, Final

import networkx as nx

from graphaudit.findings import Finding

__all__ = [
    "APPLIES",
    "FEEDS",
    "OPERATION",
    "PIPELINE_EDGE_KINDS",
    "PIPELINE_NODE_KINDS",
    "SOURCE",
    "TRANSFORM",
    "add_feed",
    "add_step",
    "add_transform",
    "column_subject",
    "columns_of",
    "findings_on_pipeline",
    "is_pipeline_graph",
    "json_attr",
    "new_pipeline_graph",
    "pipeline_dict",
    "pipeline_node",
    "sink_of",
    "sources_of",
    "steps",
    "transforms_of",
    "upstream",
]

SOURCE: Final = "source"
OPERATION: Final = "operation"
TRANSFORM: Final = "transform"
FEEDS: Final = "feeds"
APPLIES: Final = "applies"

PIPELINE_NODE_KINDS: Final = frozenset({SOURCE, OPERATION, TRANSFORM})
PIPELINE_EDGE_KINDS: Final = frozenset({FEEDS, APPLIES})


def pipeline_node(path: str) -> str:
    """Node id of the pipeline step or transform at *path*.

    Example:
        >>> pipeline_node("eval/map#1/Resize")
        'ds:eval/map#1/Resize'
    """
    return f"ds:{path}"


def column_subject(pipeline: str, column: str) -> str:
    """What a finding about one column of a pipeline names it by.

    Example:
        >>> column_subject("train", "image")
        'train:image'
    """
    return f"{pipeline}:{column}"


def json_attr(value: Any) -> str:
    """*value* as compact JSON text with sorted keys (what list and dict attributes hold).

    Example:
        >>> json_attr({"size": [224, 224], "interpolation": 0})
        '{"interpolation":0,"size":[224,224]}'
    """
    return json.dumps(value, sort_keys=True, separators=(",", ":"), default=str)


def new_pipeline_graph(name: str, **attrs: Any) -> nx.MultiDiGraph:
    """An empty pipeline graph called *name* (``kind="pipeline"``)."""
    return nx.MultiDiGraph(name=name, kind="pipeline", pipeline=name, **attrs)


def is_pipeline_graph(graph: nx.MultiDiGraph) -> bool:
    """Whether *graph* is a pipeline graph (not a network's)."""
    return graph.graph.get("kind") == "pipeline"


def _count(graph: nx.MultiDiGraph, op: str) -> int:
    """1 + the number of steps of *op* already in *graph* (so ids follow the data flow)."""
    return 1 + sum(1 for _, d in graph.nodes(data=True) if d.get("op") == op and d["kind"] != TRANSFORM)


def add_step(graph: nx.MultiDiGraph, kind: str, op: str, **attrs: Any) -> str:
    """Add a ``source`` or ``operation`` node for *op* (numbered from the sources) and return its id."""
    if kind not in (SOURCE, OPERATION):
        raise ValueError(f"a pipeline step is a {SOURCE} or an {OPERATION}, not {kind!r}")
    name = graph.graph["pipeline"]
    path = f"{name}/{op}#{_count(graph, op)}"
    node = pipeline_node(path)
    defaults = {"op_type": "", "class_name": "", "columns": "", "rows": -1, "params": "{}", "order": 0}
    graph.add_node(node, kind=kind, op=op, path=path, pipeline=name, **{**defaults, **attrs})
    return node


def add_transform(graph: nx.MultiDiGraph, step: str, name: str, index: int, **attrs: Any) -> str:
    """Add the *index*-th transform of the map *step* and its ``applies`` edge; return its id."""
    base = f"{graph.nodes[step]['path']}/{name}"
    same = sum(
        1
        for _, t, d in graph.out_edges(step, data=True)
        if d["kind"] == APPLIES and graph.nodes[t]["name"] == name
    )
    path = base if not same else f"{base}#{same + 1}"  # the first stays unnumbered, the second is #2
    node = pipeline_node(path)
    defaults = {"random": False, "python": False, "columns": "[]", "params": "{}", "op_type": ""}
    graph.add_node(
        node,
        kind=TRANSFORM,
        name=name,
        index=index,
        path=path,
        pipeline=graph.graph["pipeline"],
        **{**defaults, **attrs},
    )
    graph.add_edge(step, node, kind=APPLIES, index=index)
    return node


def add_feed(graph: nx.MultiDiGraph, src: str, dst: str, index: int = 0) -> None:
    """Rows flow from *src* into *dst* (its *index*-th input)."""
    graph.add_edge(src, dst, kind=FEEDS, index=index)


def steps(graph: nx.MultiDiGraph) -> list[tuple[str, dict[str, Any]]]:
    """``(node, attributes)`` of every source and operation, in data-flow order."""
    found = [(n, d) for n, d in graph.nodes(data=True) if d["kind"] in (SOURCE, OPERATION)]
    return sorted(found, key=lambda item: item[1]["order"])


def sources_of(graph: nx.MultiDiGraph) -> list[str]:
    """The source nodes, in data-flow order."""
    return [n for n, d in steps(graph) if d["kind"] == SOURCE]


def sink_of(graph: nx.MultiDiGraph) -> str | None:
    """The last operation: the dataset object the pipeline was captured from."""
    found = steps(graph)
    return found[-1][0] if found else None


def upstream(graph: nx.MultiDiGraph, node: str) -> Iterator[str]:
    """The steps rows pass before *node* (nearest first), following ``feeds`` edges back."""
    seen: set[str] = set()
    frontier = [node]
    while frontier:
        current = frontier.pop(0)
        for src, _, data in sorted(graph.in_edges(current, data=True), key=lambda e: e[2].get("index", 0)):
            if data["kind"] == FEEDS and src not in seen:
                seen.add(src)
                yield src
                frontier.append(src)


def transforms_of(graph: nx.MultiDiGraph, step: str) -> list[str]:
    """The transform nodes a map step applies, in order."""
    found = [(d["index"], t) for _, t, d in graph.out_edges(step, data=True) if d["kind"] == APPLIES]
    return [t for _, t in sorted(found)]


def columns_of(attrs: dict[str, Any]) -> list[str] | None:
    """The columns stored in a node's ``columns`` attribute (``None`` when unknown)."""
    text = attrs.get("columns", "")
    return list(json.loads(text)) if text else None


def _matches(graph: nx.MultiDiGraph, finding: Finding, sink: str | None) -> set[str]:
    name = graph.graph.get("pipeline", "")
    by_path = {d["path"]: n for n, d in graph.nodes(data=True)}
    hit: set[str] = set()
    for subject in {finding.subject, *finding.subjects}:
        if subject in by_path:
            hit.add(by_path[subject])
        elif sink is not None and (subject == name or subject.startswith(f"{name}:")):
            hit.add(sink)
    return hit


def findings_on_pipeline(graph: nx.MultiDiGraph, findings: Iterable[Finding]) -> dict[str, list[Finding]]:
    """The findings shown on each node of a pipeline graph, matched by the paths in their subjects.

    A subject that is a node's path marks that node; ``<pipeline>:<column>`` or the
    pipeline's own name marks the pipeline's last operation (where the columns leave it).

    Example:
        >>> from graphaudit.findings import Finding
        >>> graph = new_pipeline_graph("train")
        >>> batch = add_step(graph, OPERATION, "batch")
        >>> found = Finding("GA003", "x", "warning", "train:image", "m", "f")
        >>> list(findings_on_pipeline(graph, [found]))
        ['ds:train/batch#1']
    """
    sink = sink_of(graph)
    on: dict[str, list[Finding]] = {}
    for finding in findings:
        for node in _matches(graph, finding, sink):
            on.setdefault(node, []).append(finding)
    return on


def pipeline_dict(graph: nx.MultiDiGraph) -> dict[str, Any]:
    """The graph as plain data for a report's JSON: ``{"nodes": [{"id", "kind", "path", ...}], "edges": [...]}``.

    Example:
        >>> graph = new_pipeline_graph("train")
        >>> add_feed(graph, add_step(graph, SOURCE, "CSVDataset"), add_step(graph, OPERATION, "batch", order=1))
        >>> [n["id"] for n in pipeline_dict(graph)["nodes"]], pipeline_dict(graph)["edges"][0]["kind"]
        (['ds:train/CSVDataset#1', 'ds:train/batch#1'], 'feeds')
    """
    nodes = [{"id": node, **attrs} for node, attrs in graph.nodes(data=True)]
    edges = [{"source": s, "target": t, **attrs} for s, t, attrs in graph.edges(data=True)]
    return {"nodes": nodes, "edges": edges}

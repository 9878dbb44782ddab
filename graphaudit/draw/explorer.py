"""The HTML explorer's model: everything its script needs to draw any expansion of the graph.

The page opens on a view laid out here by Graphviz's ``dot`` (collapsed to a readable size,
see :func:`start_plan`); every later view is laid out in the page by Graphviz compiled to
WebAssembly (``assets/viz-global.js``), from DOT the page's script assembles exactly as
:func:`graphaudit.draw.dot.body` does. So the model holds, for every item of the tree, its
DOT attribute list in each form it can take (a node, a closed box, an open cluster), already
written and escaped by the Python side, and the script only joins them: no user text is
ever escaped, or unescaped, by the script. With them: the roll-up runs, the edges, the
findings and the items each is drawn on, each item's details and search text, and the
state the page opens in.

Example:
    >>> import graphaudit, json
    >>> from mindspore import nn
    >>> from graphaudit.draw.dot import draw
    >>> block = nn.Dense(2, 2)
    >>> report = graphaudit.audit(nn.SequentialCell([block, block]))
    >>> model = explorer_model(draw(report.graph, report.findings), report.graph)
    >>> [item["k"] for item in model["items"]], model["findings"][0]["items"], model["open"]
    (['cell:', 'cell:0'], [1, 0], [0])
    >>> model["items"][0]["b"][:40]
    ' [id="ga-cell_3a_" class="ga-collapsed g'
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

from graphaudit.draw.collapse import Plan, assign, plan
from graphaudit.draw.details import details, search_text
from graphaudit.draw.dot import EDGE_LABEL_LIMIT, EDGE_TEXT, Drawing, attr_text, body, digraph
from graphaudit.draw.legend import LEGEND, PARAMETER_REASONS, SHAPES
from graphaudit.draw.marks import TIMES, look, run_look, shown_items
from graphaudit.draw.style import KIND_COLORS, SEVERITY_COLORS, SEVERITY_FILLS, dot_text, svg_id
from graphaudit.draw.tree import Tree

__all__ = ["START_NODES", "explorer_model", "model_json", "start_dot", "start_plan", "state_dot"]

START_NODES = 60  # the explorer opens on the most detailed view with at most this many nodes


def start_plan(tree: Tree, runs: dict, chosen: Plan, asked: bool, budget: int = START_NODES) -> Plan:
    """The view the explorer opens on: *chosen* when the caller asked for a depth or roll-up
    (*asked*), else the deepest view of at most *budget* nodes, with or without roll-ups,
    whichever draws more; the later calls of a reused cell start closed.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.collapse import runs_of
        >>> from graphaudit.draw.build import build_tree
        >>> net = nn.SequentialCell([nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()]) for _ in range(40)])
        >>> tree = build_tree(graphaudit.to_networkx(net))
        >>> start = start_plan(tree, runs_of(tree), plan(tree), asked=False)
        >>> start.depth, start.count, start.rolled
        (1, 41, False)
    """
    if asked:
        return chosen
    best: Plan | None = None
    for rollup in (False, True):
        if rollup and not runs:
            continue
        for depth in range(tree.max_depth(), -1, -1):
            candidate = plan(tree, depth=depth, rollup=rollup, runs=runs, repeats=False)
            if candidate.count <= budget:
                if best is None or candidate.count > best.count:
                    best = candidate
                break
    return best or plan(tree, depth=0, repeats=False)


def _legend() -> dict[str, Any]:
    kinds = {
        kind: {"text": text, "shape": SHAPES[kind], "fill": KIND_COLORS[kind]}
        for kind, text in LEGEND.items()
    }
    severities = {s: {"color": SEVERITY_COLORS[s], "fill": SEVERITY_FILLS[s]} for s in SEVERITY_COLORS}
    return {"kinds": kinds, "severities": severities, "reasons": PARAMETER_REASONS}


def explorer_model(
    drawing: Drawing, graph: nx.MultiDiGraph, *, max_nodes: int = 1500, asked: bool = False
) -> dict[str, Any]:
    """The explorer's model of *drawing* (made by :func:`~graphaudit.draw.dot.draw` from *graph*).

    *asked*: the caller chose the depth or roll-up, so the page opens on *drawing*'s view;
    *max_nodes*: the page refuses to lay out a view of more nodes than this.
    """
    tree, marks, runs = drawing.tree, drawing.marks, drawing.runs
    assert tree is not None and marks is not None
    index = {key: i for i, key in enumerate(tree.items)}
    items = []
    for key, item in tree.items.items():
        parent = index[item.parent] if item.parent is not None else -1
        record: dict[str, Any] = {"k": key, "id": svg_id(key), "p": parent, "t": item.kind}
        if item.children:
            record["b"] = attr_text(look(tree, marks, key, "box"))
            record["g"] = attr_text(look(tree, marks, key, "cluster"))
        else:
            record["n"] = attr_text(look(tree, marks, key, "node"))
        if item.why:
            record["w"] = item.why
        if item.first:
            record["f"] = index[item.first]
        record["l"] = item.label[0]
        record["s"] = search_text(graph, tree, key)
        record["x"] = details(graph, tree, key)
        items.append(record)
    run_list = list(runs.values())
    run_index = {run.key: i for i, run in enumerate(run_list)}
    runs_json = [
        {
            "k": run.key,
            "id": svg_id(run.key),
            "p": index[run.parent] if run.parent is not None else -1,
            "m": [index[m] for m in run.members],
            "b": attr_text(run_look(tree, marks, run)),
            "l": f"{tree.items[run.members[0]].cls} {TIMES}{run.count}",
        }
        for run in run_list
    ]
    edges = [[index[e.src], index[e.dst], e.kind, dot_text(e.label) if e.label else ""] for e in tree.edges]
    start = start_plan(tree, runs, drawing.plan, asked)
    findings = [
        {**finding.to_dict(), "items": [index[k] for k in keys]}
        for finding, keys in zip(marks.findings, marks.items_of)
    ]
    return {
        "view": tree.view,
        "title": drawing.title,
        "head": digraph(None).source[: -len("}\n")],
        "items": items,
        "runs": runs_json,
        "edges": edges,
        "edgeText": EDGE_TEXT,
        "labels": drawing.labels,
        "labelLimit": EDGE_LABEL_LIMIT,
        "loss": index[tree.loss.key] if tree.loss is not None and tree.loss.key in index else -1,
        "findings": findings,
        "open": sorted(index[k] for k in start.open),
        "active": [run_index[k] for k in start.rollups],
        "roll": start.rolled,
        "maxNodes": max_nodes,
        "legend": _legend(),
    }


def state_dot(drawing: Drawing, head: str, open_: list[int], active: list[int]) -> tuple[str, Plan]:
    """The DOT the explorer's script writes for a state (item indices open, roll-up indices active)."""
    tree, marks, runs = drawing.tree, drawing.marks, drawing.runs
    assert tree is not None and marks is not None
    keys, run_list = list(tree.items), list(runs.values())
    chosen = assign(tree, [keys[i] for i in open_], [run_list[i] for i in active])
    labels = chosen.count <= EDGE_LABEL_LIMIT if drawing.labels is None else drawing.labels
    shown = shown_items(tree, chosen, marks, runs)
    return head + "".join(body(tree, chosen, shown, labels)) + "}\n", chosen


def start_dot(drawing: Drawing, model: dict[str, Any]) -> tuple[str, Plan]:
    """The DOT of the view the explorer opens on, and its plan."""
    return state_dot(drawing, model["head"], model["open"], model["active"])


def model_json(model: dict[str, Any]) -> str:
    """*model* as JSON that is safe inside a ``<script type="application/json">`` element.

    Example:
        >>> model_json({"name": "</script><b>&"})
        '{"name":"\\\\u003c/script\\\\u003e\\\\u003cb\\\\u003e\\\\u0026"}'
    """
    text = json.dumps(model, ensure_ascii=False, separators=(",", ":"))
    for char, escaped in (
        ("<", "\\u003c"),
        (">", "\\u003e"),
        ("&", "\\u0026"),
        ("\u2028", "\\u2028"),
        ("\u2029", "\\u2029"),
    ):
        text = text.replace(char, escaped)
    return text

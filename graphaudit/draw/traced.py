"""The traced view's drawing tree: every call nested in the call that made it, the data flow.

One item per call of a cell (a cluster when calls happened inside it), one per functional
operation between cells, the inputs and outputs, and the ``flows`` edges between them. A
cell called several times is one object, so its calls share one set of weights: each call
says so on its own label (``body.0 (call 2/3)``, ``Conv2d · 576 shared params``) instead of
an edge to a weights node from every call (which tangled the drawing), and a finding about
the cell is marked on every call of it. Parameters are drawn as nodes only when several
cells read them (tied weights), when a finding concerns them, or with ``params="all"``; then
a parameter that only one call reads is written on that call's label, not drawn apart.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> block = nn.Dense(2, 2)
    >>> net = nn.SequentialCell([block, block])
    >>> tree = traced_tree(graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 2), np.float32))), "shared", set())
    >>> [tree.items[k].label for k in tree.represents["cell:0"]]
    [['0 (call 1/2)', 'Dense · 6 shared params'], ['0 (call 2/2)', 'Dense · 6 shared params']]
"""

from __future__ import annotations

from collections import Counter

import networkx as nx

from graphaudit import graph as g
from graphaudit.draw.style import clip, human_count
from graphaudit.draw.tree import (
    Edge,
    Item,
    Tree,
    cell_parents,
    compiled_badge,
    lca,
    nest,
    out_nodes,
    param_item,
    param_shape,
    paths_text,
    root_class,
    subtree_params,
    why_param,
)

__all__ = ["traced_tree"]

MAX_PARAM_LINES = 6  # parameters written on one call's label with params="all"


def _io_items(graph: nx.MultiDiGraph, items: dict[str, Item]) -> None:
    for kind, base in ((g.INPUT, -1e12), (g.OUTPUT, 1e12)):
        for node, attrs in g.nodes_of_kind(graph, kind):
            shape = f"{attrs['shape']} {attrs['dtype']}"
            name = f"{kind} {attrs['index']}"
            items[node] = Item(
                node, kind, None, base + attrs["index"], [f"{name}: {shape}"], [name, shape], kind
            )


def _call_items(
    graph: nx.MultiDiGraph, items: dict[str, Item], represents: dict[str, list[str]], totals: dict[str, int]
) -> None:
    encloser = {t: s for s, t, d in graph.edges(data=True) if d["kind"] == g.ENCLOSES}
    first: dict[str, str] = {}
    calls = sorted(g.nodes_of_kind(graph, g.CALL), key=lambda nd: nd[1]["order"])
    n_calls = Counter(attrs["cell"] for _, attrs in calls)
    for node, attrs in calls:
        cell, path, count = attrs["cell"], attrs["path"], n_calls[attrs["cell"]]
        name = path if path else "(network)"
        total = totals.get(cell, 0)
        shared = count > 1 and total
        second = attrs["class_name"] + (
            f" · {human_count(total)}{' shared' if shared else ''} params" if total else ""
        )
        second += compiled_badge(graph.nodes[cell]) if cell in graph else ""
        tooltip = [f"call {attrs['index']} of {count}: {path or '(network)'}", second]
        if count > 1:
            name += f" (call {attrs['index']}/{count})"
            where = paths_text(graph, cell) if cell in graph else path
            tooltip.append(
                f"one cell object ({where}) called {count} times: every call uses the same weights"
            )
        items[node] = Item(
            node,
            g.CALL,
            encloser.get(node),
            attrs["order"],
            [name, second],
            tooltip,
            signature=attrs["class_name"],
            cls=attrs["class_name"],
            params=total,
            path=path,
            first="" if not cell or first.setdefault(cell, node) == node else first[cell],
        )
        represents.setdefault(cell, []).append(node)
    for node, attrs in g.nodes_of_kind(graph, g.OP):
        items[node] = Item(
            node,
            g.OP,
            encloser.get(node),
            attrs["order"],
            [attrs["op_type"]],
            [f"{attrs['op']} in {attrs['scope'] or '(network)'}"],
            signature="op:" + attrs["op_type"],
            cls=attrs["op_type"],
        )


def _never_called(
    graph: nx.MultiDiGraph,
    items: dict[str, Item],
    represents: dict[str, list[str]],
    flagged: set[str],
    parents: dict[str, str | None],
    totals: dict[str, int],
) -> None:
    """Flagged cells never called: a dashed node where their parent's call is."""
    for cell, _ in g.nodes_of_kind(graph, g.CELL):
        if cell in flagged and cell not in represents:
            anchor = parents[cell]
            while anchor is not None and anchor not in represents:
                anchor = parents[anchor]
            attrs = graph.nodes[cell]
            parent = represents[anchor][0] if anchor is not None else None
            items[cell] = Item(
                cell,
                g.CELL,
                parent,
                items[parent].order + 0.75 if parent else 0.0,
                [attrs["path"] or "(network)", f"{attrs['class_name']} · never called"],
                [f"cell {attrs['path']} was never called in the traced pass"],
                signature="never-called",
                params=totals.get(cell, 0),
                path=attrs["path"],
            )
            represents[cell] = [cell]


def _parameters(
    graph: nx.MultiDiGraph,
    items: dict[str, Item],
    edges: list[Edge],
    represents: dict[str, list[str]],
    params: str,
    flagged: set[str],
) -> None:
    """Parameters drawn once, with an edge to every call or op that reads them."""
    on_label: dict[str, list[str]] = {}
    for node, attrs in g.nodes_of_kind(graph, g.PARAMETER):
        readers = [r for r in dict.fromkeys(out_nodes(graph, node, g.READS)) if r in items]
        reader_cells = {graph.nodes[r].get("cell", r) for r in readers}
        owners = g.owners_of(graph, node)
        why = why_param(node, params, len(set(owners)) > 1 or len(reader_cells) > 1, flagged)
        if not why:
            continue
        if why == "asked" and len(readers) == 1:  # params="all": on the label of its only reader
            on_label.setdefault(readers[0], []).append(clip(f"{attrs['name']} {param_shape(attrs)}"))
            represents[node] = readers
            continue
        anchors = readers or [k for o in owners for k in represents.get(o, [])]
        order = min((items[a].order for a in anchors), default=0.0) - 0.25
        items[node] = param_item(graph, node, lca(items, anchors) if anchors else None, order, why)
        edges += [Edge(node, r, g.READS) for r in readers]
        represents[node] = [node]
    for reader, lines in on_label.items():
        more = len(lines) - MAX_PARAM_LINES
        items[reader].label += lines[:MAX_PARAM_LINES] + ([f"… {more} more parameters"] if more > 0 else [])
        items[reader].tooltip += lines


def traced_tree(graph: nx.MultiDiGraph, params: str, flagged: set[str]) -> Tree:
    """The traced view of *graph* (unordered: :func:`graphaudit.draw.tree.finish` orders it)."""
    parents = cell_parents(graph)
    totals = subtree_params(graph, parents)
    items: dict[str, Item] = {}
    edges: list[Edge] = []
    represents: dict[str, list[str]] = {}
    _io_items(graph, items)
    _call_items(graph, items, represents, totals)
    nest(items)
    _never_called(graph, items, represents, flagged, parents, totals)
    _parameters(graph, items, edges, represents, params, flagged)
    flows = [
        (s, d, a.get("shape", "")) for s, d, a in g.edges_of_kind(graph, g.FLOWS) if s in items and d in items
    ]
    shapes_in: dict[str, set[str]] = {}
    for _, dst, shape in flows:
        shapes_in.setdefault(dst, set()).add(shape)
    for src, dst, shape in flows:  # a shape is written where it changes, not on every edge after that
        edges.append(Edge(src, dst, g.FLOWS, "" if shapes_in.get(src) == {shape} else shape))
    for node in items:
        represents.setdefault(node, [node])
    return Tree("traced", items, [], edges, represents, root_class(graph))

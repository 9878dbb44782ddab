"""The tree of things to draw, built from a captured graph, before any collapsing.

Two views: *traced* (a graph with ``call`` nodes: calls nested by ``encloses``, ops, inputs
and outputs, the data flow) and *structure* (cells nested by the ``contains`` tree). In
both, parameters are drawn once each, only when several cells share them (or when asked, or
when a finding concerns them); a cell whose parameters are used by several calls gets one
"weights" node linked to every call.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
    >>> tree.view, [(key, item.parent) for key, item in tree.items.items()]
    ('structure', [('cell:', None), ('cell:0', 'cell:')])
"""

from __future__ import annotations

import json
from collections import Counter, deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from graphaudit import graph as g
from graphaudit.draw.style import human_count

__all__ = ["Edge", "Item", "Tree", "build_tree"]

PARAM_MODES = ("shared", "all", "none")


@dataclass
class Item:
    """One thing that can be drawn: a node, or a cluster when it has children."""

    key: str
    kind: str
    parent: str | None
    order: float
    label: list[str]
    tooltip: list[str]
    signature: str = ""
    cls: str = ""
    params: int = 0
    path: str = ""
    children: list[str] = field(default_factory=list)
    depth: int = 0
    why: str = ""  # why an optional item (a parameter) is drawn: "shared", "flagged" or "asked"


@dataclass(frozen=True)
class Edge:
    """An edge between two items, of a graph edge kind (or ``order``, invisible)."""

    src: str
    dst: str
    kind: str
    label: str = ""


@dataclass
class Tree:
    """Items by key (parents before children), top-level keys, edges, and node → item keys."""

    view: str
    items: dict[str, Item]
    roots: list[str]
    edges: list[Edge]
    represents: dict[str, list[str]]
    title: str = ""

    def max_depth(self) -> int:
        return max((item.depth for item in self.items.values()), default=0)


def _out(graph: nx.MultiDiGraph, node: str, kind: str) -> list[str]:
    return [t for _, t, d in graph.out_edges(node, data=True) if d["kind"] == kind]


def _in(graph: nx.MultiDiGraph, node: str, kind: str) -> list[str]:
    return [s for s, _, d in graph.in_edges(node, data=True) if d["kind"] == kind]


def _flagged(graph: nx.MultiDiGraph, flagged: Iterable[str]) -> set[str]:
    marked = {n for n, d in graph.nodes(data=True) if d.get("findings")}
    return marked | {n for n in flagged if n in graph}


def _cell_parents(graph: nx.MultiDiGraph) -> dict[str, str | None]:
    """The first parent of every cell reached breadth-first from the root (``cell:``)."""
    root = g.cell_node("")
    parents: dict[str, str | None] = {root: None} if root in graph else {}
    queue = deque(parents)
    while queue:
        cell = queue.popleft()
        for child in _out(graph, cell, g.CONTAINS):
            if child not in parents:
                parents[child] = cell
                queue.append(child)
    for node, _ in g.nodes_of_kind(graph, g.CELL):
        parents.setdefault(node, None)
    return parents


def _subtree_params(graph: nx.MultiDiGraph, parents: dict[str, str | None]) -> dict[str, int]:
    """Elements of the distinct parameters held by each cell and everything inside it."""
    owned: dict[str, set[str]] = {cell: set(_out(graph, cell, g.OWNS)) for cell in parents}
    for cell in reversed(list(parents)):  # breadth-first order reversed: children first
        parent = parents[cell]
        if parent is not None:
            owned[parent] |= owned[cell]
    return {cell: sum(graph.nodes[p]["numel"] for p in params) for cell, params in owned.items()}


def _paths_text(graph: nx.MultiDiGraph, node: str) -> str:
    paths = g.node_paths(graph, node)
    if len(paths) > 3:
        return f"{paths[0]} = … = {paths[-1]} ({len(paths)} paths)"
    return " = ".join(paths)


def _why_param(node: str, params: str, shared: bool, flagged: set[str]) -> str:
    """Why parameter *node* is drawn (``""``: it is not), so that the legend can say so."""
    if params == "shared" and shared:
        return "shared"
    if node in flagged:
        return "flagged"
    return "asked" if params == "all" else ""


def _param_item(graph: nx.MultiDiGraph, node: str, parent: str | None, order: float, why: str) -> Item:
    attrs = graph.nodes[node]
    frozen = "" if attrs["requires_grad"] else " (frozen)"
    shape = f"{attrs['shape']} {attrs['dtype']}{frozen}"
    return Item(
        node,
        g.PARAMETER,
        parent,
        order,
        [attrs["name"], *([f"at {attrs['path']}"] if attrs["path"] != attrs["name"] else []), shape],
        [f"parameter {attrs['name']}", f"paths: {_paths_text(graph, node)}", shape],
        signature="parameter",
        params=attrs["numel"],
        path=attrs["path"],
        why=why,
    )


def _lca(items: dict[str, Item], keys: list[str]) -> str | None:
    """The deepest item enclosing every one of *keys* (``None``: the top level)."""
    chains = []
    for key in dict.fromkeys(keys):
        chain = []
        parent = items[key].parent
        while parent is not None:
            chain.append(parent)
            parent = items[parent].parent
        chains.append(chain[::-1])
    if not chains:
        return None
    common = None
    for level in zip(*chains):
        if len(set(level)) != 1:
            break
        common = level[0]
    return common


def _io_items(graph: nx.MultiDiGraph, items: dict[str, Item]) -> None:
    for kind, base in ((g.INPUT, -1e12), (g.OUTPUT, 1e12)):
        for node, attrs in g.nodes_of_kind(graph, kind):
            shape = f"{attrs['shape']} {attrs['dtype']}"
            items[node] = Item(
                node, kind, None, base + attrs["index"], [f"{kind} {attrs['index']}", shape], [shape], kind
            )


def _traced(graph: nx.MultiDiGraph, params: str, flagged: set[str]) -> Tree:
    parents = _cell_parents(graph)
    totals = _subtree_params(graph, parents)
    items: dict[str, Item] = {}
    edges: list[Edge] = []
    represents: dict[str, list[str]] = {}
    encloser = {t: s for s, t, d in graph.edges(data=True) if d["kind"] == g.ENCLOSES}
    calls = sorted(g.nodes_of_kind(graph, g.CALL), key=lambda nd: nd[1]["order"])
    n_calls = Counter(attrs["cell"] for _, attrs in calls)
    _io_items(graph, items)
    for node, attrs in calls:
        cell = attrs["cell"]
        path = attrs["path"]
        name = path if path else "(network)"
        if n_calls[cell] > 1:
            name += f" (call {attrs['index']}/{n_calls[cell]})"
        total = totals.get(cell, 0)
        second = attrs["class_name"] + (f" · {human_count(total)} params" if total else "")
        items[node] = Item(
            node,
            g.CALL,
            encloser.get(node),
            attrs["order"],
            [name, second],
            [f"call {attrs['index']} of {n_calls[cell]}: {path or '(network)'}", second],
            signature=attrs["class_name"],
            cls=attrs["class_name"],
            params=total,
            path=path,
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
    _nest(items)
    # One weights node per cell called several times (holding parameters or flagged).
    weights_of: dict[str, str] = {}
    for cell, count in n_calls.items():
        if cell and cell in graph and count > 1 and (totals.get(cell, 0) or cell in flagged):
            attrs = graph.nodes[cell]
            callers = represents[cell]
            items[cell] = Item(
                cell,
                "weights",
                _lca(items, callers),
                items[callers[0]].order + 0.5,
                [_paths_text(graph, cell), f"{attrs['class_name']} · {human_count(totals[cell])} params"],
                [f"cell {attrs['path']} called {count} times: one set of weights"],
                signature="weights",
                params=totals[cell],
                path=attrs["path"],
            )
            edges += [Edge(call, cell, g.INVOKES) for call in callers]
            represents[cell] = [cell]
            weights_of[cell] = cell
    # Flagged cells never called: a dashed node where their parent's call is.
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
    # Parameters: drawn once, with an edge to every call or op that reads them.
    for node, _ in g.nodes_of_kind(graph, g.PARAMETER):
        readers = [r for r in _out(graph, node, g.READS) if r in items]
        reader_cells = {graph.nodes[r].get("cell", r) for r in readers}
        owners = g.owners_of(graph, node)
        why = _why_param(node, params, len(set(owners)) > 1 or len(reader_cells) > 1, flagged)
        if not why:
            continue
        anchors = readers or [k for o in owners for k in represents.get(o, [])]
        order = min((items[a].order for a in anchors), default=0.0) - 0.25
        items[node] = _param_item(graph, node, _lca(items, anchors) if anchors else None, order, why)
        edges += [Edge(node, r, g.READS) for r in dict.fromkeys(readers)]
        represents[node] = [node]
    for src, dst, attrs in g.edges_of_kind(graph, g.FLOWS):
        if src in items and dst in items:
            edges.append(Edge(src, dst, g.FLOWS, attrs.get("shape", "")))
    for node in items:
        represents.setdefault(node, [node])
    root_class = graph.nodes[g.cell_node("")]["class_name"] if g.cell_node("") in graph else ""
    return _finish(Tree("traced", items, [], edges, represents, root_class))


def _structure(graph: nx.MultiDiGraph, params: str, flagged: set[str]) -> Tree:
    parents = _cell_parents(graph)
    totals = _subtree_params(graph, parents)
    items: dict[str, Item] = {}
    edges: list[Edge] = []
    for order, (cell, parent) in enumerate(parents.items()):
        attrs = graph.nodes[cell]
        total = totals[cell]
        second = attrs["class_name"] + (f" · {human_count(total)} params" if total else "")
        items[cell] = Item(
            cell,
            g.CELL,
            parent,
            float(order),
            [_paths_text(graph, cell) or "(network)", second],
            [f"cell {_paths_text(graph, cell) or '(network)'}", second],
            signature=attrs["class_name"],
            cls=attrs["class_name"],
            params=total,
            path=attrs["path"],
        )
        for other in dict.fromkeys(_in(graph, cell, g.CONTAINS)):
            if other != parent:
                edges.append(Edge(other, cell, g.CONTAINS))
    _nest(items)
    for node, _ in g.nodes_of_kind(graph, g.PARAMETER):
        owners = list(dict.fromkeys(g.owners_of(graph, node)))
        why = _why_param(node, params, len(owners) > 1, flagged)
        if not why:
            continue
        order = min((items[o].order for o in owners), default=0.0) + 0.5
        items[node] = _param_item(graph, node, _lca(items, owners) if owners else None, order, why)
        edges += [Edge(o, node, g.OWNS) for o in owners]
    represents = {node: [node] for node in items}
    root_class = graph.nodes[g.cell_node("")]["class_name"] if g.cell_node("") in graph else ""
    return _finish(Tree("structure", items, [], edges, represents, root_class))


def _nest(items: dict[str, Item]) -> None:
    for item in items.values():
        if item.parent is not None and item.parent not in items:
            item.parent = None


def _finish(tree: Tree) -> Tree:
    """Order the items parents-first, fill children, depths and structural signatures."""
    items = tree.items
    for item in items.values():
        item.children = []
    for key, item in sorted(items.items(), key=lambda kv: kv[1].order):
        if item.parent is None:
            tree.roots.append(key)
        else:
            items[item.parent].children.append(key)
    ordered: dict[str, Item] = {}
    stack = list(reversed(tree.roots))
    while stack:
        key = stack.pop()
        item = ordered[key] = items[key]
        item.depth = 0 if item.parent is None else items[item.parent].depth + 1
        stack.extend(reversed(item.children))
    for key in reversed(list(ordered)):  # children before parents
        item = ordered[key]
        if item.children:
            inner = ",".join(ordered[c].signature for c in item.children)
            item.signature = f"{item.signature}({inner})"
    tree.items = ordered
    return tree


def build_tree(
    graph: nx.MultiDiGraph, *, view: str = "auto", params: str = "shared", flagged: Iterable[str] = ()
) -> Tree:
    """The drawing tree of *graph*.

    *view* is ``"traced"`` (needs a graph captured with ``inputs``), ``"structure"`` or
    ``"auto"`` (traced when the graph has calls); *params* is ``"shared"`` (parameters held
    or used by several cells), ``"all"`` or ``"none"``; parameters and cells in *flagged*
    (or with a ``findings`` attribute) are always drawn.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(2, 2)])
        >>> tree = build_tree(graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 2), np.float32))))
        >>> tree.view, list(tree.items)
        ('traced', ['input:0', 'call:#1', 'call:0#1', 'output:0'])
    """
    if params not in PARAM_MODES:
        raise ValueError(f"params must be one of {PARAM_MODES}, got {params!r}")
    traced = any(d["kind"] == g.CALL for _, d in graph.nodes(data=True))
    if view == "auto":
        view = "traced" if traced else "structure"
    if view not in ("traced", "structure"):
        raise ValueError(f"view must be 'auto', 'traced' or 'structure', got {view!r}")
    if view == "traced" and not traced:
        raise ValueError("view='traced' needs a graph captured with inputs=...; use view='structure'")
    marked = _flagged(graph, flagged)
    return (_traced if view == "traced" else _structure)(graph, params, marked)


def finding_ids(attrs: dict[str, Any]) -> list[str]:
    """The check IDs a report attached to a node (its ``findings`` attribute).

    Example:
        >>> finding_ids({"findings": '["GA101"]'}), finding_ids({})
        (['GA101'], [])
    """
    return list(json.loads(attrs.get("findings") or "[]"))

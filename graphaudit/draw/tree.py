"""The tree of things to draw, built from a captured graph, before any collapsing.

Two views: *traced* (a graph with ``call`` nodes: calls nested by ``encloses``, ops, inputs
and outputs, the data flow; built by :mod:`graphaudit.draw.traced`) and *structure* (cells
nested by the ``contains`` tree). In both, parameters are drawn once each, only when several
cells share them (or when asked, or when a finding concerns them). The loss, which is not
in the network's graph, is drawn after the outputs when a :class:`Loss` is given.
:func:`graphaudit.draw.build.build_tree` chooses the view.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> tree = finish(structure_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])), "shared", set()))
    >>> tree.view, [(key, item.parent) for key, item in tree.items.items()]
    ('structure', [('cell:', None), ('cell:0', 'cell:')])
"""

from __future__ import annotations

import json
from collections import deque
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

import networkx as nx

from graphaudit import graph as g
from graphaudit.draw.style import human_count

__all__ = [
    "LOSS_PREFIX",
    "PARAM_MODES",
    "Edge",
    "Item",
    "Loss",
    "Tree",
    "add_loss",
    "finish",
    "flagged_nodes",
    "structure_tree",
]

PARAM_MODES = ("shared", "all", "none")
LOSS_PREFIX = "loss:"


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
    first: str = ""  # for a later call of a cell called several times: the key of its first call


@dataclass(frozen=True)
class Edge:
    """An edge between two items, of a graph edge kind (or ``order``, invisible; ``loss``)."""

    src: str
    dst: str
    kind: str
    label: str = ""


@dataclass(frozen=True)
class Loss:
    """The loss the network is trained with: not in its graph, drawn after the outputs it reads.

    A finding whose subject (or one of its subjects) is *name* is marked on the loss box as
    well as on its own nodes: a loss-pairing finding shows on both ends.

    Example:
        >>> Loss("BCEWithLogitsLoss").inputs
        ('output:0',)
    """

    name: str
    inputs: tuple[str, ...] = ("output:0",)

    @property
    def key(self) -> str:
        return LOSS_PREFIX + self.name


@dataclass
class Tree:
    """Items by key (parents before children), top-level keys, edges, and node → item keys."""

    view: str
    items: dict[str, Item]
    roots: list[str]
    edges: list[Edge]
    represents: dict[str, list[str]]
    title: str = ""
    loss: Loss | None = None

    def max_depth(self) -> int:
        return max((item.depth for item in self.items.values()), default=0)

    def keys_of(self, nodes: Iterable[str], subjects: Iterable[str] = ()) -> list[str]:
        """The items that show graph *nodes* (and the loss box, when a subject is the loss)."""
        keys = [k for node in nodes for k in self.represents.get(node, [])]
        if self.loss is not None and self.loss.key in self.items and self.loss.name in subjects:
            keys.append(self.loss.key)
        return list(dict.fromkeys(keys))


def out_nodes(graph: nx.MultiDiGraph, node: str, kind: str) -> list[str]:
    return [t for _, t, d in graph.out_edges(node, data=True) if d["kind"] == kind]


def _in(graph: nx.MultiDiGraph, node: str, kind: str) -> list[str]:
    return [s for s, _, d in graph.in_edges(node, data=True) if d["kind"] == kind]


def flagged_nodes(graph: nx.MultiDiGraph, flagged: Iterable[str]) -> set[str]:
    return {n for n in flagged if n in graph}


def cell_parents(graph: nx.MultiDiGraph) -> dict[str, str | None]:
    """The first parent of every cell reached breadth-first from the root (``cell:``)."""
    root = g.cell_node("")
    parents: dict[str, str | None] = {root: None} if root in graph else {}
    queue = deque(parents)
    while queue:
        cell = queue.popleft()
        for child in out_nodes(graph, cell, g.CONTAINS):
            if child not in parents:
                parents[child] = cell
                queue.append(child)
    for node, _ in g.nodes_of_kind(graph, g.CELL):
        parents.setdefault(node, None)
    return parents


def subtree_params(graph: nx.MultiDiGraph, parents: dict[str, str | None]) -> dict[str, int]:
    """Elements of the distinct parameters held by each cell and everything inside it."""
    owned: dict[str, set[str]] = {cell: set(out_nodes(graph, cell, g.OWNS)) for cell in parents}
    for cell in reversed(list(parents)):  # breadth-first order reversed: children first
        parent = parents[cell]
        if parent is not None:
            owned[parent] |= owned[cell]
    return {cell: sum(graph.nodes[p]["numel"] for p in params) for cell, params in owned.items()}


def paths_text(graph: nx.MultiDiGraph, node: str) -> str:
    paths = g.node_paths(graph, node)
    if len(paths) > 3:
        return f"{paths[0]} = … = {paths[-1]} ({len(paths)} paths)"
    return " = ".join(paths)


def why_param(node: str, params: str, shared: bool, flagged: set[str]) -> str:
    """Why parameter *node* is drawn (``""``: it is not), so that the legend can say so."""
    if params == "shared" and shared:
        return "shared"
    if node in flagged:
        return "flagged"
    return "asked" if params == "all" else ""


def param_shape(attrs: dict[str, Any]) -> str:
    frozen = "" if attrs["requires_grad"] else " (frozen)"
    return f"{attrs['shape']} {attrs['dtype']}{frozen}"


def param_item(graph: nx.MultiDiGraph, node: str, parent: str | None, order: float, why: str) -> Item:
    attrs = graph.nodes[node]
    shape = param_shape(attrs)
    return Item(
        node,
        g.PARAMETER,
        parent,
        order,
        [attrs["name"], *([f"at {attrs['path']}"] if attrs["path"] != attrs["name"] else []), shape],
        [f"parameter {attrs['name']}", f"paths: {paths_text(graph, node)}", shape],
        signature="parameter",
        params=attrs["numel"],
        path=attrs["path"],
        why=why,
    )


def lca(items: dict[str, Item], keys: list[str]) -> str | None:
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


def structure_tree(graph: nx.MultiDiGraph, params: str, flagged: set[str]) -> Tree:
    parents = cell_parents(graph)
    totals = subtree_params(graph, parents)
    items: dict[str, Item] = {}
    edges: list[Edge] = []
    for order, (cell, parent) in enumerate(parents.items()):
        attrs = graph.nodes[cell]
        total = totals[cell]
        second = (
            attrs["class_name"] + (f" · {human_count(total)} params" if total else "") + compiled_badge(attrs)
        )
        items[cell] = Item(
            cell,
            g.CELL,
            parent,
            float(order),
            [paths_text(graph, cell) or "(network)", second],
            [f"cell {paths_text(graph, cell) or '(network)'}", second],
            signature=attrs["class_name"],
            cls=attrs["class_name"],
            params=total,
            path=attrs["path"],
        )
        for other in dict.fromkeys(_in(graph, cell, g.CONTAINS)):
            if other != parent:
                edges.append(Edge(other, cell, g.CONTAINS))
    nest(items)
    for node, _ in g.nodes_of_kind(graph, g.PARAMETER):
        owners = list(dict.fromkeys(g.owners_of(graph, node)))
        why = why_param(node, params, len(owners) > 1, flagged)
        if not why:
            continue
        order = min((items[o].order for o in owners), default=0.0) + 0.5
        items[node] = param_item(graph, node, lca(items, owners) if owners else None, order, why)
        edges += [Edge(o, node, g.OWNS) for o in owners]
    represents = {node: [node] for node in items}
    _traced_to_cells(graph, represents)
    return Tree("structure", items, [], edges, represents, root_class(graph))


def _traced_to_cells(graph: nx.MultiDiGraph, represents: dict[str, list[str]]) -> None:
    """In the structure view, a finding on a call shows on its cell, one on an operation on the
    cell whose call ran it, one on an input or output on the network: none is lost."""
    cell_of = {n: a["cell"] for n, a in g.nodes_of_kind(graph, g.CALL) if a.get("cell") in represents}
    for call, cell in cell_of.items():
        represents[call] = [cell]
    for src, dst, attrs in graph.edges(data=True):
        if attrs["kind"] == g.ENCLOSES and src in cell_of and dst not in represents:
            represents[dst] = [cell_of[src]]
    root = g.cell_node("")
    for kind in (g.INPUT, g.OUTPUT):
        for node, _ in g.nodes_of_kind(graph, kind):
            if root in represents:
                represents.setdefault(node, [root])


def compiled_badge(attrs: dict[str, Any]) -> str:
    """`` · @jit`` (or `` · GRAPH_MODE``, `` · @jit f``) for a cell node the user compiles, else ``""``.

    Example:
        >>> compiled_badge({"kind": "cell", "compiled": "jit", "jit_functions": '["rel_bias"]'})
        ' · @jit · @jit rel_bias'
    """
    how = attrs.get("compiled", "")
    badge = {"jit": " · @jit", "graph-mode": " · GRAPH_MODE"}.get(how, "")
    functions = g.compiled_functions(attrs) if attrs.get("kind") == g.CELL else []
    return badge + (f" · @jit {', '.join(functions)}" if functions else "")


def root_class(graph: nx.MultiDiGraph) -> str:
    return str(graph.nodes[g.cell_node("")]["class_name"]) if g.cell_node("") in graph else ""


def nest(items: dict[str, Item]) -> None:
    for item in items.values():
        if item.parent is not None and item.parent not in items:
            item.parent = None


def add_loss(tree: Tree, loss: Loss) -> None:
    """Draw *loss* after the outputs it reads (those drawn; every output when none is named)."""
    outputs = [k for k, item in tree.items.items() if item.kind == g.OUTPUT]
    read = [k for k in loss.inputs if k in tree.items] or outputs
    where = "(" + ", ".join(tree.items[k].tooltip[0] for k in read) + ", label)" if read else ""
    tree.items[loss.key] = Item(
        loss.key,
        "loss",
        None,
        2e12,
        [loss.name, f"loss{where}"],
        [f"the loss: {loss.name}{where}, what training minimises"],
        signature="loss",
        cls=loss.name,
    )
    tree.edges.extend(Edge(k, loss.key, "loss") for k in read)
    tree.represents[loss.key] = [loss.key]
    tree.loss = loss


def finish(tree: Tree) -> Tree:
    """Order the items parents-first, fill children, depths and structural signatures."""
    items = tree.items
    tree.roots = []
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


def finding_ids(attrs: dict[str, Any]) -> list[str]:
    """The check IDs a report attached to a node (its ``findings`` attribute).

    Example:
        >>> finding_ids({"findings": '["GA101"]'}), finding_ids({})
        (['GA101'], [])
    """
    return list(json.loads(attrs.get("findings") or "[]"))

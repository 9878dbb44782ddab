"""What the explorer's details pane says about each drawn item, and the text its search matches.

For a call: the class, the cell's paths, which call of how many, the shapes it took and
returned, its parameter count, its training flag and its own parameters (name, shape,
dtype, trainable); for an operation, a cell, a parameter, an input or output and the loss,
what the graph knows of them. Everything is plain data (rows of label and value) for the
page's script to write as text.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.draw.build import build_tree
    >>> graph = graphaudit.to_networkx(nn.Dense(2, 3), inputs=Tensor(np.ones((1, 2), np.float32)))
    >>> tree = build_tree(graph)
    >>> found = details(graph, tree, "call:#1")
    >>> found["rows"][:3], found["params"][0]
    ([['class', 'Dense'], ['path', '(network)'], ['call', '1 of 1']], ['weight', '[3, 2]', 'Float32', 'trainable'])
    >>> search_text(graph, tree, "call:#1")
    '(network) dense weight bias'
"""

from __future__ import annotations

import json
from typing import Any

import networkx as nx

from graphaudit import graph as g
from graphaudit.draw.style import human_count
from graphaudit.draw.tree import LOSS_PREFIX, Tree, out_nodes

__all__ = ["details", "search_text"]

MAX_PARAMS = 40  # parameters listed for one cell


def _shapes(graph: nx.MultiDiGraph, node: str, incoming: bool) -> str:
    edges = graph.in_edges(node, data=True) if incoming else graph.out_edges(node, data=True)
    found = [f"{d.get('shape', '?')} {d.get('dtype', '')}".strip() for *_, d in edges if d["kind"] == g.FLOWS]
    return ", ".join(dict.fromkeys(found))


def _own_params(graph: nx.MultiDiGraph, cell: str) -> list[list[str]]:
    rows = []
    for param in dict.fromkeys(out_nodes(graph, cell, g.OWNS)):
        attrs = graph.nodes[param]
        rows.append(
            [
                attrs["name"],
                str(attrs["shape"]),
                attrs["dtype"],
                "trainable" if attrs["requires_grad"] else "frozen",
            ]
        )
    return rows


def _cell_rows(graph: nx.MultiDiGraph, cell: str) -> list[list[str]]:
    if cell not in graph:
        return []
    attrs = graph.nodes[cell]
    paths = g.node_paths(graph, cell)
    rows = [["paths", " = ".join(paths)]] if len(paths) > 1 else []
    rows.append(["training", str(attrs.get("training", "?"))])
    if attrs.get("module"):
        rows.append(["module", attrs["module"]])
    return rows


def details(graph: nx.MultiDiGraph, tree: Tree, key: str) -> dict[str, Any]:
    """Rows of ``[label, value]`` and the own parameters of item *key*, for the details pane."""
    item = tree.items[key]
    rows: list[list[str]] = []
    params: list[list[str]] = []
    attrs = graph.nodes[key] if key in graph else {}
    if item.kind == g.CALL:
        cell = attrs.get("cell", "")
        calls = len(tree.represents.get(cell, [])) if cell else 1
        rows += [["class", attrs["class_name"]], ["path", attrs["path"] or "(network)"]]
        rows.append(["call", f"{attrs['index']} of {max(calls, attrs['index'])}"])
        rows += [["takes", _shapes(graph, key, True)], ["returns", _shapes(graph, key, False)]]
        rows += _cell_rows(graph, cell)
        params = _own_params(graph, cell) if cell in graph else []
    elif item.kind == g.OP:
        rows += [
            ["operation", attrs["op"]],
            ["type", attrs["op_type"]],
            ["in", attrs["scope"] or "(network)"],
        ]
        rows += [["takes", _shapes(graph, key, True)], ["returns", _shapes(graph, key, False)]]
    elif item.kind == g.CELL:
        rows += [
            ["class", attrs["class_name"]],
            ["path", attrs["path"] or "(network)"],
            *_cell_rows(graph, key),
        ]
        params = _own_params(graph, key)
    elif item.kind == g.PARAMETER:
        rows += [["name", attrs["name"]], ["paths", " = ".join(json.loads(attrs.get("paths") or "[]"))]]
        rows += [["shape", f"{attrs['shape']} {attrs['dtype']}"], ["trainable", str(attrs["requires_grad"])]]
        rows.append(
            ["held by", ", ".join(graph.nodes[o]["path"] or "(network)" for o in g.owners_of(graph, key))]
        )
    elif item.kind in (g.INPUT, g.OUTPUT):
        rows += [[item.kind, str(attrs["index"])], ["shape", f"{attrs['shape']} {attrs['dtype']}"]]
    elif key.startswith(LOSS_PREFIX):
        rows += [["loss", item.cls], ["compares", item.label[-1].removeprefix("loss")]]
    if item.params:
        short = "" if human_count(item.params) == str(item.params) else f" ({human_count(item.params)})"
        rows.append(["parameters", f"{item.params:,}{short} inside"])
    more = len(params) - MAX_PARAMS
    return {
        "rows": rows,
        "params": params[:MAX_PARAMS] + ([[f"… {more} more", "", "", ""]] if more > 0 else []),
    }


def search_text(graph: nx.MultiDiGraph, tree: Tree, key: str) -> str:
    """What a search matches item *key* by: its paths, its class and its parameters' names, lowercased."""
    item = tree.items[key]
    attrs = graph.nodes[key] if key in graph else {}
    words = [item.path or ("(network)" if item.kind in (g.CALL, g.CELL) else item.label[0]), item.cls]
    cell = attrs.get("cell", key) if item.kind in (g.CALL, g.CELL) else ""
    if cell and cell in graph:
        words += g.node_paths(graph, cell)[1:]
        words += [graph.nodes[p]["name"] for p in dict.fromkeys(out_nodes(graph, cell, g.OWNS))]
    elif item.kind == g.PARAMETER:
        words.append(attrs["name"])
    return " ".join(dict.fromkeys(w for w in words if w)).lower()

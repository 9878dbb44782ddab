"""The drawing tree of a captured graph, in the view asked for (traced or structure).

:func:`build_tree` chooses the view and puts together what :mod:`~graphaudit.draw.tree` (the
tree's records and the structure view) and :mod:`~graphaudit.draw.traced` (the traced view)
build; every renderer (DOT, the explorer) starts from it.
"""

from __future__ import annotations

from collections.abc import Iterable

import networkx as nx

from graphaudit import graph as g
from graphaudit.draw.traced import traced_tree
from graphaudit.draw.tree import PARAM_MODES, Loss, Tree, add_loss, finish, flagged_nodes, structure_tree

__all__ = ["build_tree"]


def build_tree(
    graph: nx.MultiDiGraph,
    *,
    view: str = "auto",
    params: str = "shared",
    flagged: Iterable[str] = (),
    loss: Loss | None = None,
) -> Tree:
    """The drawing tree of *graph*.

    *view* is ``"traced"`` (needs a graph captured with ``inputs``), ``"structure"`` or
    ``"auto"`` (traced when the graph has calls); *params* is ``"shared"`` (parameters held
    or used by several cells), ``"all"`` or ``"none"``; parameters and cells in *flagged*
    (or with a ``findings`` attribute) are always drawn; *loss* is drawn after the outputs.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> net = nn.SequentialCell([nn.Dense(2, 2)])
        >>> tree = build_tree(graphaudit.to_networkx(net, inputs=Tensor(np.ones((1, 2), np.float32))),
        ...                   loss=Loss("MSELoss"))
        >>> tree.view, list(tree.items)
        ('traced', ['input:0', 'call:#1', 'call:0#1', 'output:0', 'loss:MSELoss'])
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
    marked = flagged_nodes(graph, flagged)
    tree = (traced_tree if view == "traced" else structure_tree)(graph, params, marked)
    if loss is not None:
        add_loss(tree, loss)
    return finish(tree)

"""What kind of cell is this: containers, BatchNorms, Dropouts, and their modes (shared by GA1xx, GA5xx, GA7xx).

Example:
    >>> from mindspore import nn
    >>> is_batchnorm(nn.BatchNorm2d(3)), is_dropout(nn.Dropout(p=0.2)), drop_probability(nn.Dropout(p=0.25))
    (True, True, 0.25)
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g

if TYPE_CHECKING:
    import networkx as nx

    from graphaudit.checks.context import AuditContext

__all__ = [
    "affine_frozen",
    "batchnorm_classes",
    "drop_probability",
    "holds_parameters",
    "is_batchnorm",
    "is_container",
    "is_dropout",
    "is_mode_dependent",
    "set_train_reached_a_branch",
    "training_flag_set",
    "uses_batch_statistics",
]

_DROPOUT_WORDS = ("Dropout", "DropPath", "DropBlock")


@functools.cache
def batchnorm_classes() -> tuple[type, ...]:
    """``mindspore.nn``'s BatchNorm base class, and ``mindspore.mint``'s when this version has it."""
    from mindspore import nn

    found: list[type] = [nn.layer.normalization._BatchNorm]
    try:  # mindspore.mint's BatchNorm (track_running_stats instead of use_batch_statistics)
        from mindspore.mint.nn.layer.normalization import _BatchNorm as MintBatchNorm
    except ImportError:  # pragma: no cover - older MindSpore
        pass
    else:
        found.append(MintBatchNorm)
    return tuple(found)


def is_container(cell: Any) -> bool:
    """A ``SequentialCell``, ``CellList`` or ``CellDict``: a cell that only holds others in slots."""
    from mindspore import nn

    return isinstance(cell, (nn.SequentialCell, nn.CellList, nn.CellDict))


def holds_parameters(graph: nx.MultiDiGraph, cell_node: str) -> bool:
    """Whether the cell or any cell inside it owns a parameter."""
    if graph.nodes[cell_node]["n_params"] > 0:
        return True
    return any(holds_parameters(graph, child) for child, _ in g.edges_out(graph, cell_node, g.CONTAINS))


def is_batchnorm(cell: Any) -> bool:
    """A BatchNorm of ``mindspore.nn`` or ``mindspore.mint`` (or a class named like one)."""
    if isinstance(cell, batchnorm_classes()):
        return True
    return "BatchNorm" in type(cell).__name__


def is_dropout(cell: Any) -> bool:
    """A dropout-like cell: ``nn.Dropout``/``Dropout1d/2d/3d``, ``mint.nn.Dropout``, DropPath..."""
    from mindspore import nn

    if isinstance(cell, (nn.Dropout, nn.Dropout1d, nn.Dropout2d, nn.Dropout3d)):
        return True
    name = type(cell).__name__
    return any(word in name for word in _DROPOUT_WORDS)


def is_mode_dependent(cell: Any) -> bool:
    return is_batchnorm(cell) or is_dropout(cell)


def training_flag_set(cell: Any) -> bool:
    """Whether ``set_train`` (or ``add_flags(training=...)``) ever ran on this cell.

    A Cell starts with ``training=False`` without any flag recorded; ``set_train`` records
    ``training`` in ``_func_graph_flags`` (MindSpore 2.10).
    """
    return "training" in (getattr(cell, "_func_graph_flags", None) or {})


def set_train_reached_a_branch(cells: Iterable[Any]) -> bool:
    """Whether ``set_train`` ever ran on a cell holding others (the network, a wrapper, a branch).

    ``set_train`` called on single BatchNorm or Dropout cells when they are built, as some
    zoos do in ``__init__``, does not count: the ``set_train`` on the network that training
    or evaluation starts with overwrites those.
    """
    return any(training_flag_set(cell) and next(iter(cell.cells()), None) is not None for cell in cells)


def uses_batch_statistics(cell: Any) -> bool:
    """Whether a BatchNorm normalises with the statistics of the batch when called now."""
    explicit = getattr(cell, "use_batch_statistics", None)
    if isinstance(explicit, bool):
        return explicit
    mint_batchnorm = batchnorm_classes()[1:]
    if mint_batchnorm and isinstance(cell, mint_batchnorm) and not cell.training:
        return getattr(cell, "running_mean", None) is None and getattr(cell, "running_var", None) is None
    return bool(cell.training)


def affine_frozen(ctx: AuditContext, node: str) -> bool:
    """Whether the BatchNorm of cell *node* has a scale and shift that do not train: frozen, on purpose.

    Read from the cell's ``owns`` edges: the parameters' ``name`` and ``requires_grad`` are
    MindSpore properties that do work on each access, and three checks ask for every BatchNorm.
    """
    graph = ctx.graph
    affine = [
        (attrs["name"], attrs["requires_grad"])
        for pnode, _ in g.edges_out(graph, node, g.OWNS)
        for attrs in (graph.nodes[pnode],)
        if len(g.shape_of(attrs)) == 1
        and not any(w in attrs["name"] for w in ("moving", "running", "num_batches"))
    ]
    return bool(affine) and all(not trains or ctx.spec.is_frozen(name) for name, trains in affine)


def drop_probability(cell: Any) -> float | None:
    """The probability that a dropout-like cell zeroes an element, as it will run.

    ``nn.Dropout`` keeps its rate in the ``ops.Dropout`` primitive it builds in ``__init__``
    (``p`` and ``keep_prob`` written later are not used for the rate); the others keep it in
    ``p`` / ``prob`` / ``drop_prob`` / ``drop_rate`` or ``keep_prob``.
    """
    from mindspore import nn

    primitive = getattr(cell, "dropout", None)
    if isinstance(cell, nn.Dropout) and primitive is not None and hasattr(primitive, "keep_prob"):
        if getattr(cell, "keep_prob", None) == 1 or getattr(cell, "p", None) == 0:
            return 0.0  # construct() returns its input unchanged
        return 1.0 - float(primitive.keep_prob)
    for attribute in ("p", "prob", "drop_prob", "drop_rate"):
        value = vars(cell).get(attribute)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
    keep = vars(cell).get("keep_prob")
    if isinstance(keep, (int, float)) and not isinstance(keep, bool):
        return 1.0 - float(keep)
    return None


def mode_problem(ctx: AuditContext, node: str) -> str | None:
    """What the BatchNorm or dropout of cell *node* would do wrong in the mode the network is audited for (``ctx.mode``), or None."""
    cell = ctx.structure.cells[node]
    if is_batchnorm(cell):
        if ctx.mode == "train":
            if getattr(cell, "use_batch_statistics", None) is False or affine_frozen(ctx, node):
                return None  # told to ignore the batch, or frozen: kept in eval mode on purpose, whatever the mode
            if not uses_batch_statistics(cell):
                return "normalises with its moving statistics instead of the batch's and never updates them"
        elif uses_batch_statistics(cell):
            explicit = getattr(cell, "use_batch_statistics", None) is True
            why = " (use_batch_statistics=True)" if explicit else ""
            return f"normalises with the statistics of each inference batch{why} and updates its moving statistics"
        return None
    rate = drop_probability(cell)
    if rate is None or rate <= 0:
        return None
    if ctx.mode == "train" and not cell.training:
        return f"is disabled: it will not drop anything (p={rate:g} is meant for training)"
    if ctx.mode == "eval" and cell.training:
        return f"still drops {rate:.0%} of its inputs at random at inference"
    return None

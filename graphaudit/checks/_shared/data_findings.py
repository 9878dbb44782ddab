"""What every data check (GA0xx) shares: where a data finding is drawn, and the statistics of the sample.

A data finding names the pipeline step or the column it is about in its ``subject`` and
``subjects`` (``train/shuffle#1``, ``train:image``; see :mod:`graphaudit.graph.pipeline`):
that is where the pipeline drawing marks it. Its ``nodes`` are the nodes of the *network's*
graph the data meets (:func:`anchors`): the input a column feeds or the output its labels
are compared with, when the forward pass was traced, else the network itself (``cell:``);
none in a data-only audit (:func:`graphaudit.audit_dataset`), which has no network graph.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.checks.context import AuditContext
    >>> anchors(AuditContext.build(nn.Dense(2, 2)), column="image")
    ['cell:']
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphaudit import graph as g
from graphaudit.checks._shared.data_stats import ColumnStats, column_stats
from graphaudit.evidence.dataset import DataSample

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = ["anchors", "feature_stats"]


def anchors(ctx: AuditContext, *, column: str | None = None, label: bool = False) -> list[str]:
    """The network nodes a data finding is drawn on (see the module docstring)."""
    graph = ctx.graph
    root = g.cell_node("")
    if root not in graph:
        return []  # a data-only audit: no network graph
    if label and g.output_node(0) in graph:
        return [g.output_node(0)]
    sample = ctx.get(DataSample)
    if column is not None and sample is not None and column in sample.features:
        node = g.input_node(sample.features.index(column))
        if node in graph:
            return [node]
    return [root]


def feature_stats(ctx: AuditContext) -> dict[str, ColumnStats]:
    """The statistics of every sampled feature column that holds numbers (computed once per audit)."""
    return ctx.shared(_feature_stats)


def _feature_stats(ctx: AuditContext) -> dict[str, ColumnStats]:
    sample = ctx.need(DataSample)
    found = {}
    for name in sample.features:
        values = sample.sample.column(name)
        if values is not None and values.dtype.kind in "biuf" and values.size:
            found[name] = column_stats(values)
    return found

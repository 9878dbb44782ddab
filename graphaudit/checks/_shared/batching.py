"""The batch step of the training pipeline: its batch size, what drops the last batch, the rows it groups (GA722, GA723).

Example:
    >>> import mindspore.dataset as ds, numpy as np
    >>> from graphaudit.capture.data.pipeline import pipeline_graph
    >>> data = ds.NumpySlicesDataset({"x": np.zeros((10, 2)), "label": np.arange(10)}).batch(4)
    >>> [(b.size, b.rows, b.drop_remainder) for b in batch_steps(pipeline_graph(data))]
    [(4, 10, False)]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.graph import pipeline as gp

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["BatchStep", "batch_steps"]


@dataclass(frozen=True)
class BatchStep:
    """One ``.batch(size, drop_remainder)`` of a pipeline and the rows it groups (-1: unknown)."""

    node: str
    path: str
    size: int
    rows: int
    drop_remainder: bool

    @property
    def steps(self) -> int:
        """Batches per epoch (-1 when the rows are unknown)."""
        if self.rows < 0:
            return -1
        return self.rows // self.size if self.drop_remainder else -(-self.rows // self.size)


def batch_steps(graph: nx.MultiDiGraph) -> list[BatchStep]:
    """Every batch step of a captured pipeline whose batch size is a known integer."""
    found = []
    for node, attrs in gp.steps(graph):
        if attrs.get("op") != "batch" or attrs.get("batch_size", -1) < 1:
            continue
        rows = next((int(graph.nodes[s].get("rows", -1)) for s in graph.predecessors(node)), -1)
        found.append(
            BatchStep(node, attrs["path"], int(attrs["batch_size"]), rows, bool(attrs.get("drop_remainder")))
        )
    return found

"""GA015 last-batch-of-one-before-batchnorm."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.batching import batch_steps
from graphaudit.checks._shared.cells import is_batchnorm
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import TrainingData
from graphaudit.evidence.dataset_labels import DataConsumer
from graphaudit.evidence.mode import IntendedMode
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


def _values_per_channel(ctx: AuditContext, node: str) -> int | None:
    """How many values per channel the BatchNorm at *node* normalises in a batch of one (None: unknown)."""
    for call in g.calls_of(ctx.graph, node):
        for _, _, data in ctx.graph.in_edges(call, data=True):
            if data["kind"] == g.FLOWS and data.get("shape"):
                shape = g.shape_of(data)
                per = 1
                for d in shape[2:]:
                    per *= int(d)
                return per
    name = type(ctx.structure.cells[node]).__name__
    return 1 if name.endswith("1d") else None


@dataclass(frozen=True)
class LastBatchOfOne(Cause):
    """A batch() step whose last batch holds one row, in a network with BatchNorm layers.

    *degenerate*: the BatchNorms then normalise a single value per channel (an error), else they
    compute their statistics from one sample (info).
    """

    names_subjects = True
    path: str  # the batch() step
    rows: int  # the rows that reach it
    size: int  # its batch_size
    cells: tuple[str, ...]  # the BatchNorm cells, by path
    classes: tuple[str, ...]  # their classes, in the same order
    degenerate: bool

    def message(self) -> str:
        names = listing(f"{cell} ({name})" for cell, name in zip(self.cells, self.classes))
        effect = (
            f"{names} then normalise a single value per channel: the variance is 0, every output equals beta and "
            "no gradient flows below them"
            if self.degenerate
            else f"{names} then compute their statistics from one sample (several values per channel): a noisy step"
        )
        return (
            f"{self.path} groups {self.rows} rows into batches of {self.size} with drop_remainder=False, so the last "
            f"batch of every epoch holds 1 row. In training, {effect}."
        )

    def fix(self) -> str:
        return f"Use .batch({self.size}, drop_remainder=True), or a batch size that leaves no single row."


@register(
    "GA015",
    "last-batch-of-one-before-batchnorm",
    severity="error",
    also=("info",),
    needs=(
        TrainingData,
        DataConsumer,
    ),
    uses=(IntendedMode,),
    once="one finding per batch() step of the training pipeline: every BatchNorm its last batch reaches is listed",
    causes=(LastBatchOfOne,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """batch(drop_remainder=False) leaving a last batch of one row, fed to a network with BatchNorm in training.

    What it does:
        For every ``batch(n, drop_remainder=False)`` of the training pipeline whose input
        length MindSpore can count, reports when that length leaves a remainder of exactly
        one row while the network holds BatchNorm cells. It is an error when a BatchNorm then
        normalises a single value per channel (a ``BatchNorm1d`` on ``(N, C)`` features, or a
        ``BatchNorm2d`` whose traced input is 1x1); info when each channel still has several
        values (a ``BatchNorm2d`` over ``H x W``), where the last step only gets noisy
        statistics. Not judged with ``mode="eval"``.

    Why is this bad:
        In training a BatchNorm normalises with the batch's own mean and variance. Over a
        single value the variance is 0: every output equals ``beta``, the gradient to the
        layers below is zero, and the moving statistics take in a variance of 0. MindSpore
        raises nothing (PyTorch refuses such a batch: "Expected more than 1 value per channel
        when training"), so once per epoch a step quietly trains on nothing useful.

    Example:
        ```python
        train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(32)  # 1,025 rows: the last batch holds 1
        net = nn.SequentialCell([nn.Dense(16, 32), nn.BatchNorm1d(32), nn.ReLU(), nn.Dense(32, 2)])
        ```

    Use instead:
        ```python
        train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(32, drop_remainder=True)
        ```
    """
    if ctx.mode == "eval":
        return
    ctx.need(DataConsumer)
    norms = [node for node, cell in ctx.structure.cells.items() if is_batchnorm(cell)]
    if not norms:
        return
    data = ctx.need(TrainingData)
    for step in batch_steps(data.graph):
        rows, size = step.rows, step.size
        if step.drop_remainder or size < 2 or rows <= 0 or rows % size != 1:
            continue
        degenerate = [n for n in norms if _values_per_channel(ctx, n) == 1]
        shown = degenerate or norms
        cause = LastBatchOfOne(
            step.path,
            int(rows),
            int(size),
            tuple(ctx.cell_path(n) for n in shown),
            tuple(type(ctx.structure.cells[n]).__name__ for n in shown),
            bool(degenerate),
        )
        yield ctx.finding(
            "error" if degenerate else "info",
            step.path,
            cause,
            shown,
            subjects=[step.path, *(ctx.cell_path(n) for n in shown)],
        )

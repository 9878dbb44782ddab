"""GA722 batch-size-against-data-set."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.batching import batch_steps
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted

#: A data set from which one or two batches per epoch is a configuration error, not a small problem.
MIN_ROWS = 256
#: Keskar et al.'s large-batch regime: a batch of 10% of the data set or more (at most 10 steps per epoch)...
LARGE_FRACTION = 10
#: ...judged from this many rows, the size of the data sets Keskar et al. measured on (MNIST's 60,000 and
#: down); a small problem (2,048 rows in batches of 256) makes few steps per epoch and runs many epochs.
LARGE_MIN_ROWS = 10_000
#: A batch of one from this many rows: an epoch of single-sample steps (info).
SINGLE_MIN_ROWS = 10_000


@dataclass(frozen=True)
class BatchLargerThanDataSet(Cause):
    """A batch step with drop_remainder=True whose batch is larger than the data: no batch, no training step."""

    path: str  # the pipeline's batch step
    rows: int
    size: int  # the batch size

    def message(self) -> str:
        return (
            f"{self.path} groups {self.rows} rows into batches of {self.size} with drop_remainder=True: the "
            "pipeline yields no batch, and an epoch makes no training step."
        )

    def fix(self) -> str:
        return f"Use a batch size below {self.rows} (32 to 256 is usual), or drop_remainder=False."


@dataclass(frozen=True)
class FewBatchesPerEpoch(Cause):
    """A batch size that leaves one or two batches per epoch, or batches of 10% of a large data set or more."""

    path: str  # the pipeline's batch step
    rows: int
    size: int  # the batch size
    steps: int  # batches per epoch

    def message(self) -> str:
        regime = "full-batch training" if self.steps <= 2 else "a batch of 10% of the data set or more"
        return (
            f"{self.path} groups {self.rows} rows into batches of {self.size}: {counted(self.steps, 'step')} per "
            f"epoch, so the network is updated {counted(self.steps, 'time')} per pass over the data ({regime}, "
            "which generalises worse)."
        )

    def fix(self) -> str:
        return (
            f"Use mini-batches (32 to 256 rows: {self.rows // 32 or 1}+ steps per epoch), scaling the learning rate "
            "with the batch size."
        )


@dataclass(frozen=True)
class BatchOfOneFromLargeDataSet(Cause):
    """Batches of one sample from a large data set: an epoch of single-sample steps."""

    path: str  # the pipeline's batch step
    rows: int
    steps: int  # batches per epoch

    def message(self) -> str:
        return (
            f"{self.path} makes batches of one sample from {self.rows} rows: {self.steps} updates per epoch, each "
            "from one sample's gradient, and BatchNorm cannot compute batch statistics."
        )

    def fix(self) -> str:
        return "Use mini-batches (16 to 256 rows), scaling the learning rate with the batch size."


@register(
    "GA722",
    "batch-size-against-data-set",
    severity="warning",
    also=("error", "info"),
    needs=(TrainingData,),
    uses=(DataSample,),
    causes=(BatchLargerThanDataSet, FewBatchesPerEpoch, BatchOfOneFromLargeDataSet),
    once="one finding per batch() step of the training pipeline",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A batch size that leaves no batch, or one or two per epoch, of the training set.

    What it does:
        Reads the ``.batch(size, drop_remainder)`` steps of the training pipeline
        (``dataset=``) and the number of rows each groups. An error when
        ``drop_remainder=True`` and the batch is larger than the data: the pipeline yields no
        batch at all. A warning when a data set of 256 rows or more makes at most two
        batches per epoch (the batch size is half the data set or more), or when a data set of
        10,000 rows or more makes at most 10 (the batch is 10% of the data set or more). Info for a
        batch of one sample from 10,000 rows or more.

    Why is this bad:
        With ``drop_remainder=True`` a batch larger than the data set is dropped whole: an
        epoch has zero steps, and training "finishes" without one update. A batch holding the
        whole data set makes one step per epoch: 100 epochs are 100 updates, and full-batch
        training lands in sharp minima that generalise worse (Keskar et al., ICLR 2017, see
        a generalisation gap from batches of 10% of the data). "Batch size too large" is
        among the hyper-parameter problems of the MindSpore accuracy guide (§2), and the
        batch size is a training-configuration fault AutoTrainer (ICSE'21) and DeepDiagnosis
        (ICSE'22) trace problems back to. The 256-row floor keeps small problems (a few dozen
        rows, where full-batch training is a reasonable choice) out; the 10% is Keskar et al.'s
        large-batch setting, and 10,000 rows keep small problems (2,048 rows in batches of
        256) silent. A
        batch of one is noisy and slow (an epoch of 60,000 steps on MNIST) and cannot use
        BatchNorm, but small batches train well (Masters & Luschi 2018 find 2 to 32 best):
        info only.

    Example:
        ```python
        train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(60000)     # x has 60000 rows
        ```

    Use instead:
        ```python
        train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(64, drop_remainder=True)
        ```
    """
    graph = ctx.need(TrainingData).graph
    for step in batch_steps(graph):
        if step.rows <= 0:
            continue
        if step.steps == 0:
            cause = BatchLargerThanDataSet(step.path, step.rows, step.size)
            yield ctx.finding("error", step.path, cause, anchors(ctx))
        elif (step.rows >= MIN_ROWS and step.steps <= 2) or (
            step.rows >= LARGE_MIN_ROWS and step.size * LARGE_FRACTION >= step.rows
        ):
            cause = FewBatchesPerEpoch(step.path, step.rows, step.size, step.steps)
            yield ctx.finding("warning", step.path, cause, anchors(ctx))
        elif step.size == 1 and step.rows >= SINGLE_MIN_ROWS:
            cause = BatchOfOneFromLargeDataSet(step.path, step.rows, step.steps)
            yield ctx.finding("info", step.path, cause, anchors(ctx))

"""GA803 shard-sizes-differ."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.rank_data import ShardSizes, shard_sizes, source_paths
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.evidence.ranks import RankData
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class ShardSizesDiffer(Cause):
    """The data-parallel ranks have different numbers of batches per epoch (some rank none at all: ``empty``)."""

    sizes: tuple[
        tuple[int, tuple[str, ...]], ...
    ]  # (batches per epoch, the ranks with that many), most common first

    @property
    def empty(self) -> tuple[str, ...]:
        """The ranks without a batch."""
        return ShardSizes(self.sizes).empty

    def message(self) -> str:
        empty = self.empty
        consequence = (
            f"{listing(empty, None)} ha{'ve' if len(empty) > 1 else 's'} no batch at all: the job stops at its first "
            "all-reduce."
            if empty
            else "A rank with more batches waits in an all-reduce the others never join (the job hangs), "
            "or the others' extra batches are never trained on."
        )
        return f"The data-parallel ranks' batches per epoch differ ({ShardSizes(self.sizes).describe()}). {consequence}"

    def fix(self) -> str:
        return (
            "Give every rank a shard of the same size: let MindSpore split the data (num_shards=get_group_size(), "
            "shard_id=get_rank(), which pads the shards to one size), and the same batch size and drop_remainder "
            "on every rank."
        )


@register(
    "GA803",
    "shard-sizes-differ",
    severity="warning",
    also=("error",),
    needs=(RankData, TrainingData),
    uses=(DataSample,),
    causes=(ShardSizesDiffer,),
    once="one finding per data-parallel job: every rank's batches per epoch are listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The data-parallel ranks do not have the same number of batches per epoch.

    What it does:
        With two ranks or more (under ``msrun`` with ``dataset=`` on every rank, or with the
        ``peers=`` files of ``fingerprint(net, dataset=train_ds)``), compares the batches per
        epoch each rank's pipeline reports (``get_dataset_size()``, as the capture reads it)
        and reports them when they differ: a warning, an error when a rank has none (its
        shard is empty). A rank whose size MindSpore cannot tell cheaply is left out.
        MindSpore's own sharding pads the shards to one size (``num_shards=`` and
        ``DistributedSampler`` give every rank ``ceil(rows / num_shards)`` rows), so this
        mostly finds the user's own splits, a ``drop_remainder`` or batch size that differs
        per rank, or a ``take()``/``filter`` on one rank.

    Why is this bad:
        Every training step all-reduces the gradients: each rank waits for all the others.
        A rank with more batches runs steps the others never join and hangs in the
        all-reduce until the job times out; when the loop stops at the shortest rank instead,
        the others' extra rows are never trained on, each epoch. A rank with an empty shard
        contributes nothing and stops the job at the first step.

    Example:
        ```python
        files = all_files[rank::world]  # 10 files: 4 for rank 0 and 1, 2 for rank 2
        train = ds.GeneratorDataset(Reader(files), ["x", "y"]).batch(32)
        ```

    Use instead:
        ```python
        train = ds.GeneratorDataset(Reader(all_files), ["x", "y"], num_shards=world, shard_id=rank).batch(32)
        ```
    """
    verdict = shard_sizes(ctx.need(RankData).data)
    if verdict is None:
        return
    paths = source_paths(ctx) or [ctx.need(TrainingData).pipeline.name]
    cause = ShardSizesDiffer(verdict.sizes)
    yield ctx.finding("error" if cause.empty else "warning", paths[0], cause, anchors(ctx), subjects=paths)

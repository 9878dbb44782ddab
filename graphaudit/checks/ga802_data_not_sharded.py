"""GA802 data-not-sharded."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.rank_data import NotSharded, not_sharded, source_paths
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.evidence.ranks import RankData
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class DataNotSharded(Cause):
    """Data-parallel ranks that read the same rows: the training data are not split among them."""

    world: int  # how many ranks the job has
    same: tuple[tuple[str, ...], ...]  # the groups of ranks that read the same data, by label
    measured: bool  # their first batches were sampled and are equal (else: read from the sources' sharding)

    def message(self) -> str:
        return (
            f"The training data are not split among the {self.world} data-parallel ranks: "
            f"{NotSharded(self.same, self.measured).describe()}. Each rank reads every sample, so an epoch is "
            f"{self.world} epochs of data, the global batch repeats its rows and an LR schedule planned in samples "
            f"ends {self.world} times too early."
        )

    def fix(self) -> str:
        return (
            "Shard the source on every rank: num_shards=get_group_size(), shard_id=get_rank() (or "
            "sampler=ds.DistributedSampler(get_group_size(), get_rank()) for a GeneratorDataset)."
        )


@register(
    "GA802",
    "data-not-sharded",
    severity="error",
    needs=(RankData, TrainingData),
    uses=(DataSample,),
    causes=(DataNotSharded,),
    once="one finding per data-parallel job: every rank that reads the same rows is named in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Under data parallelism, every rank reads every sample of the training data.

    What it does:
        With two ranks or more (under ``msrun`` with ``dataset=`` on every rank, or with the
        ``peers=`` files of ``fingerprint(net, dataset=train_ds)``), compares the first batch
        each rank's pipeline yields, sampled from a copy under one dataset seed on every rank:
        ranks whose first batches are equal read the same rows. An unseeded shuffle draws a
        new order in every process, so without that seed the ranks' batches would differ
        even when every rank reads the whole data set; under it they differ only when the
        ranks read different rows, so a pipeline sharded by the user's own code (each rank
        reading its own files, ``num_shards=1``) is silent, and an unsharded source shuffled
        with a seed per rank is reported (it is still the whole data set on every rank).
        When fewer than two ranks' first batches could be sampled (``dataset_batches=0``,
        sampling failed, an empty shard) and their batches per epoch agree, the sources
        decide: no source sharded (``num_shards`` 1 and no ``DistributedSampler``) on any
        rank, or the same shard on every rank.

    Why is this bad:
        Data parallelism splits each epoch among the ranks: each rank should see 1/N of the
        samples. When every rank reads the whole set, an "epoch" is N epochs of data, the
        global batch holds N copies of the same rows (the gradients average nothing new), and
        an LR schedule planned in samples ends N times too early. Nothing raises. PyTorch
        Lightning inserts a ``DistributedSampler`` by default for this reason
        (``Trainer(use_distributed_sampler=True)``); MindSpore leaves it to ``num_shards``
        and ``shard_id``.

    Example:
        ```python
        init()
        train = ds.ImageFolderDataset("train/", shuffle=True).batch(32)  # every rank, every image
        ```

    Use instead:
        ```python
        init()
        train = ds.ImageFolderDataset(
            "train/", shuffle=True, num_shards=get_group_size(), shard_id=get_rank()
        ).batch(32)
        ```
    """
    verdict = not_sharded(ctx.need(RankData).data)
    if verdict is None:
        return
    paths = source_paths(ctx) or [ctx.need(TrainingData).pipeline.name]
    world = len(ctx.need(RankData).data)
    cause = DataNotSharded(world, verdict.same, verdict.measured)
    yield ctx.finding("error", paths[0], cause, anchors(ctx), subjects=paths)

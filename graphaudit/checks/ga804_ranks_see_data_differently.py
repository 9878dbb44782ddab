"""GA804 ranks-see-data-differently."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.data_findings import anchors
from graphaudit.checks._shared.rank_data import seen_differently, source_paths
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.dataset import DataSample, TrainingData
from graphaudit.evidence.ranks import RankData
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class RanksShuffleWithDifferentSeeds(Cause):
    """The ranks shuffle their sharded source with different dataset seeds, so their shards overlap."""

    seeds: tuple[tuple[int | None, tuple[str, ...]], ...]  # (seed, the ranks with it), the most common first

    def message(self) -> str:
        seeds = listing(
            (f"{listing(labels, None)}: seed {seed}" for seed, labels in self.seeds), None, separator="; "
        )
        return (
            f"The ranks shuffle their shards with different dataset seeds ({seeds}). Each rank cuts its shard "
            "from its own shuffle of the whole data set, so the shards overlap: some rows are read by several "
            "ranks each epoch and others by none."
        )

    def fix(self) -> str:
        return (
            "Set one dataset seed on every rank before building the pipeline (ds.config.set_seed(1234), not "
            "1234 + get_rank(); ms.set_seed() sets it too, so call it after); the shards alone make the ranks' "
            "data differ."
        )


@dataclass(frozen=True)
class RanksPreprocessDifferently(Cause):
    """The ranks' pipelines do not preprocess alike (other steps or parameters)."""

    groups: tuple[tuple[str, ...], ...]  # the groups of ranks that preprocess alike, the largest first

    def message(self) -> str:
        ranks = listing((listing(group, None) for group in self.groups), None, separator="; ")
        return (
            f"The ranks' pipelines do not preprocess alike: the steps and their parameters differ between "
            f"groups of ranks ({ranks}). The averaged gradient mixes data prepared in "
            "different ways, and the model fits none of them."
        )

    def fix(self) -> str:
        return (
            "Build the same pipeline on every rank (the same map transforms and parameters, batch size, "
            "drop_remainder); only the source's shard_id should depend on the rank."
        )


@register(
    "GA804",
    "ranks-see-data-differently",
    severity="error",
    needs=(RankData, TrainingData),
    uses=(DataSample,),
    causes=(RanksShuffleWithDifferentSeeds, RanksPreprocessDifferently),
    once="one finding per cause (the seeds, the preprocessing) per data-parallel job",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The data-parallel ranks shard with different seeds, or preprocess their data differently.

    What it does:
        With two ranks or more (under ``msrun`` with ``dataset=`` on every rank, or with the
        ``peers=`` files of ``fingerprint(net, dataset=train_ds)``), compares two facts of the
        ranks' pipelines. The shuffle seed of a source sharded by a shuffling
        ``DistributedSampler`` (the one ``num_shards=`` makes for ``ImageFolderDataset``,
        ``NumpySlicesDataset``, ``GeneratorDataset``...): it keeps the dataset seed of the
        moment it was made, and the ranks' seeds must agree (file sources such as
        ``TFRecordDataset`` shard by files and are not judged on their seeds). And a digest of the
        pipeline's steps and their parameters (``map`` transforms, ``batch``, ``shuffle``...),
        its sources left out since ranks may read different files: it must be the same on
        every rank. One finding per cause. An unsharded source shuffled with a seed per rank
        is GA802's (every rank reads the whole set).

    Why is this bad:
        MindSpore's ``DistributedSampler`` shuffles the whole index list with its seed, then
        gives each rank its slice: slices cut from two different orders overlap. Measured on
        MindSpore 2.10: two shards of 1,000 rows made with seeds 1 and 2 share 250 rows and
        leave 250 rows to no rank each epoch (with one seed: 0 shared, all 1,000 read). A seed
        set to ``base + rank`` (to vary augmentations) does exactly this. Different transforms
        per rank (a normalisation only on rank 0, another resize) average gradients of
        different input distributions into one model, which then fits none of them.

    Example:
        ```python
        ds.config.set_seed(1234 + get_rank())  # a different shuffle on every rank
        train = ds.ImageFolderDataset("train/", shuffle=True, num_shards=get_group_size(), shard_id=get_rank())
        ```

    Use instead:
        ```python
        ds.config.set_seed(1234)  # one shuffle, cut into disjoint shards (after ms.set_seed, which resets it)
        train = ds.ImageFolderDataset("train/", shuffle=True, num_shards=get_group_size(), shard_id=get_rank())
        ```
    """
    verdict = seen_differently(ctx.need(RankData).data)
    if verdict is None:
        return
    paths = source_paths(ctx) or [ctx.need(TrainingData).pipeline.name]
    if verdict.seeds:
        cause = RanksShuffleWithDifferentSeeds(verdict.seeds)
        yield ctx.finding("error", paths[0], cause, anchors(ctx), subjects=paths)
    if verdict.preprocessing:
        data = ctx.need(TrainingData)
        last = data.graph.nodes[data.pipeline.sink]["path"]
        yield ctx.finding("error", last, RanksPreprocessDifferently(verdict.preprocessing), anchors(ctx))

"""GA806 batchnorm-on-small-per-rank-batch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.cells import affine_frozen, is_batchnorm
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.mode import IntendedMode
from graphaudit.evidence.ranks import RankData
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing

#: Below this many samples per device BatchNorm's error rises sharply (Wu & He, Group Normalization, ECCV 2018, Fig. 1).
SMALL_BATCH = 8


def _synchronised(cell: object) -> bool:
    """A BatchNorm that computes its statistics over every rank's batch (``nn.SyncBatchNorm``)."""
    return "Sync" in type(cell).__name__


@dataclass(frozen=True)
class BatchNormOnSmallPerRankBatch(Cause):
    """Unsynchronised BatchNorm layers that normalise each rank's batch alone, below SMALL_BATCH samples."""

    names_subjects = True
    layers: tuple[str, ...]  # the BatchNorm layers' paths
    world: int  # how many ranks the job has
    rank: str  # the rank with the smallest batch, by label
    batch: int  # its samples per step
    threshold: int  # SMALL_BATCH

    def message(self) -> str:
        return (
            f"Each of the {self.world} data-parallel ranks normalises only its own batch in "
            f"{counted(len(self.layers), 'BatchNorm layer')} ({listing(self.layers)}): {self.rank} computes "
            f"{counted(self.batch, 'sample')} per step (a global batch of {self.batch * self.world}), below the "
            f"{self.threshold} under which BatchNorm's batch statistics become noise."
        )

    def fix(self) -> str:
        return (
            f"Give every rank at least {self.threshold} samples per step (a larger batch() per rank), or normalise "
            "across ranks (nn.SyncBatchNorm on Ascend/GPU) or per sample (nn.GroupNorm, nn.LayerNorm)."
        )


@register(
    "GA806",
    "batchnorm-on-small-per-rank-batch",
    severity="warning",
    needs=(RankData, IntendedMode),
    uses=(DeclaredDesign,),
    causes=(BatchNormOnSmallPerRankBatch,),
    once="one finding per network: every unsynchronised BatchNorm listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Data-parallel ranks each normalise a sliver of the batch in BatchNorm layers that are not synchronised.

    What it does:
        When the network is audited for training under data parallelism (two ranks or more,
        their setups exchanged with their fingerprints), reads the batch size of every rank's
        training pipeline (its ``batch()`` step: the samples one rank computes per step) and
        the network's BatchNorm layers that normalise with batch statistics and are not
        ``SyncBatchNorm``. When a rank's batch holds fewer than 8 samples it reports them.

    Why is this bad:
        Under data parallelism each rank's BatchNorm normalises its own slice of the global
        batch: a global batch of 32 on 8 devices is BatchNorm over 4 samples. Its mean and
        variance become noise, training is unstable and the moving statistics used at
        inference fit no real batch. Wu & He (Group Normalization, ECCV 2018, Figure 1) measure
        ResNet-50's ImageNet error rising from 23.6 % at 32 images per device to 34.7 % at 2,
        sharply below 8. Nothing raises; the global batch looks large.

    Example:
        ```python
        train = create_dataset(..., num_shards=8, shard_id=rank).batch(4)   # 4 images per device
        net = resnet50()                                                    # nn.BatchNorm2d
        ```

    Use instead:
        ```python
        train = create_dataset(..., num_shards=8, shard_id=rank).batch(32)  # >= 8 per device
        # or synchronise: nn.SyncBatchNorm (Ascend/GPU; no CPU kernel in MindSpore 2.10), or nn.GroupNorm
        ```
    """
    if ctx.need(IntendedMode).mode != "train":
        return
    data = ctx.need(RankData).data
    sizes = [(label, facts.batch_size) for label, facts in data if facts.batch_size is not None]
    if len(data) < 2 or not sizes:
        return
    label, smallest = min(sizes, key=lambda item: item[1])
    if smallest >= SMALL_BATCH:
        return
    norms = sorted(
        (ctx.cell_path(node), node)
        for node, cell in ctx.structure.cells.items()
        if is_batchnorm(cell)
        and getattr(cell, "use_batch_statistics", None) is not False
        and not _synchronised(cell)
        and not affine_frozen(ctx, node)
    )
    if not norms:
        return
    paths = tuple(path for path, _ in norms)
    cause = BatchNormOnSmallPerRankBatch(paths, len(data), label, int(smallest), SMALL_BATCH)
    yield ctx.finding("warning", paths[0], cause, [node for _, node in norms], subjects=paths)

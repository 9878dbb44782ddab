"""GA962 weights-drift-across-ranks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import RankDrift
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class WeightsDriftAcrossRanks(Cause):
    """Parameters whose weights differed across the data-parallel ranks, from the first step they did."""

    names_subjects = True
    world_size: int
    step: int  # the first step the weights differed at
    names: tuple[str, ...]  # the parameters that differed then
    drifted: int  # the comparisons that found differences
    comparisons: int  # the comparisons made

    def message(self) -> str:
        return (
            f"The weights of the {self.world_size} ranks drifted apart: at step {self.step} "
            f"{counted(len(self.names), 'parameter')} differed ({listing(self.names)}); "
            f"{self.drifted} of {self.comparisons} comparisons found differences."
        )

    def fix(self) -> str:
        return (
            "Average the gradients across ranks (DATA_PARALLEL with gradients_mean=True, or "
            "nn.DistributedGradReducer in a custom step) and give every rank the same optimizer and clipping."
        )


@register(
    "GA962",
    "weights-drift-across-ranks",
    severity="error",
    needs=(RankDrift,),
    causes=(WeightsDriftAcrossRanks,),
    once="one finding per watched msrun job: every weight that drifted apart is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Under msrun, the data-parallel ranks' weights drifted apart during the run.

    What it does:
        Every few sampled steps of a watched data-parallel run (and at the first), every rank
        hashes its weights (the fingerprints of GA801) and the hashes are exchanged with
        ``AllGather``; it reports the parameters that differ across ranks, from the first
        step they did. BatchNorm's moving statistics are not compared: each rank updates
        them from its own shard in the forward pass, so they rightly differ (``SyncBatchNorm``
        would keep them equal; it has no CPU kernel in MindSpore 2.10).

    Why is this bad:
        Data parallelism trains one model on every rank only while every rank applies the
        same averaged update to the same weights. The accuracy guide's §3.3 names weights
        that differ across nodes; GA801 checks them before training, this during it: a rank
        that skips the gradient all-reduce (no ``DistributedGradReducer``), clips its own
        gradients differently or keeps its own optimizer state drifts away silently.

    Example:
        ```python
        train = nn.TrainOneStepCell(net_with_loss, optimizer)  # no gradient reducer under msrun
        ```

    Use instead:
        ```python
        ms.set_auto_parallel_context(parallel_mode=ms.ParallelMode.DATA_PARALLEL, gradients_mean=True)
        ```
    """
    drift = ctx.need(RankDrift)
    if not drift.drift:
        return
    step, names = drift.drift[0]
    names = tuple(names)
    cause = WeightsDriftAcrossRanks(
        int(drift.world_size), int(step), names, len(drift.drift), int(drift.checks)
    )
    yield ctx.finding("error", names[0], cause, parameter_nodes(ctx, names), subjects=names)

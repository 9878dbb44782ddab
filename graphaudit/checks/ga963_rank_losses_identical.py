"""GA963 rank-losses-identical."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.rank_losses import MIN_IDENTICAL_STEPS, identical_groups
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import RankLosses
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class RankLossesIdentical(Cause):
    """Groups of data-parallel ranks whose losses were the same at every sampled step after the first."""

    world_size: int
    groups: tuple[tuple[int, ...], ...]  # the ranks of each group whose losses were the same
    steps: int  # the sampled steps judged (every one after the first)
    min_steps: int  # the fewest judged steps that can say so

    def message(self) -> str:
        if len(self.groups) == 1 and len(self.groups[0]) == self.world_size:
            who = f"all {self.world_size} ranks"
        else:
            who = listing(("ranks " + listing(group, None) for group in self.groups), None, separator="; ")
        return (
            f"The losses of {who} were the same (to float32 rounding) at every sampled step after the first "
            f"({self.steps} steps, at least {self.min_steps} needed): they read the same batches, so the data "
            "is not sharded across the ranks."
        )

    def fix(self) -> str:
        return (
            "Shard the data by rank: give the dataset num_shards=get_group_size() and shard_id=get_rank() "
            "(or a DistributedSampler), so that each rank reads its own part of every global batch."
        )


@register(
    "GA963",
    "rank-losses-identical",
    severity="error",
    needs=(RankLosses,),
    causes=(RankLossesIdentical,),
    once="one finding per watched msrun job: every group of ranks that computed the same losses is named in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Under msrun, two data-parallel ranks or more computed the same loss at every sampled step.

    What it does:
        At every sampled step of a watched run under msrun the ranks' losses are all-gathered
        (one float32 vector a rank). It reports the ranks whose losses are the same, to
        float32 rounding (4 units), at every one of at least 3 sampled steps after the first
        while the loss itself moves from step to step. Losses that differ by more than
        rounding at any sampled step are never reported; nor is a loss that never moves (a
        network whose output is constant gives the same loss on any data). Measured on
        2-rank jobs of a small MLP (6 seeds, 12 and 48 steps, with and without BatchNorm):
        every job whose ranks read their own shard had no step with equal losses; every job
        whose ranks read the same batches had equal losses at every step.

    Why is this bad:
        Data parallelism splits each global batch across the ranks: each reads its own shard.
        Ranks that read the same batches (a dataset without ``num_shards``/``shard_id``, or
        the same ``shard_id`` everywhere) compute the same gradients: the job costs N times
        the machines for one machine's training, and every epoch repeats each sample N times
        while the rest of the data is never seen. Nothing raises; only the losses tell.

    Example:
        ```python
        data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True)  # every rank reads all of it
        ```

    Use instead:
        ```python
        data = ds.NumpySlicesDataset({"x": x, "y": y}, shuffle=True,
                                     num_shards=get_group_size(), shard_id=get_rank())
        ```
    """
    ranks = ctx.need(RankLosses)
    groups = identical_groups(ranks.steps)
    if not groups:
        return
    groups = tuple(tuple(int(rank) for rank in group) for group in groups)
    cause = RankLossesIdentical(int(ranks.world_size), groups, len(ranks.steps) - 1, MIN_IDENTICAL_STEPS)
    yield ctx.finding("error", "(root)", cause, (g.cell_node(""),))

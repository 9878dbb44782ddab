"""GA964 rank-loss-departs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.rank_losses import DEPART, departures
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import RankLosses
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class RankLossDeparts(Cause):
    """Data-parallel ranks whose loss lies far from the other ranks' at most sampled steps."""

    names_subjects = True
    world_size: int
    ranks: tuple[int, ...]  # the ranks that depart, the one with the highest mean loss first
    means: tuple[float, ...]  # every rank's mean loss over the judged steps (indexed by rank)
    distances: tuple[
        float, ...
    ]  # every rank's median distance to the others' loss, in noises (indexed by rank)
    sigma: float  # the run's noise
    steps: int  # the sampled steps judged
    bound: float  # the distance, in noises, beyond which a rank departs

    def message(self) -> str:
        listed = listing(
            (
                f"rank {r} (mean loss {self.means[r]:.4g}, {self.distances[r]:.1f} noises away)"
                for r in self.ranks
            ),
            None,
            separator="; ",
        )
        if self.world_size == 2:
            high, low = self.ranks
            return (
                f"The losses of the 2 ranks lie far apart at most sampled steps: rank {high}'s mean loss is "
                f"{self.means[high]:.4g} and rank {low}'s {self.means[low]:.4g}; the median gap, "
                f"{self.distances[high]:.1f} times the run's noise ({self.sigma:.3g}), is above {self.bound:g} "
                f"over {self.steps} steps. One of them reads other data than the other; with two ranks either may "
                f"be the odd one (the one with the higher loss, rank {high}, most often is)."
            )
        if len(self.ranks) == self.world_size:
            return (
                f"The losses of the {self.world_size} ranks disperse far above the run's noise "
                f"({self.sigma:.3g}) at most of {self.steps} sampled steps: {listed}. They read different data."
            )
        return (
            f"Of the {self.world_size} ranks, {listed} lie more than {self.bound:g} times the run's noise "
            f"({self.sigma:.3g}) from the median rank's loss at most of {self.steps} sampled steps: "
            "they read other data than the rest."
        )

    def fix(self) -> str:
        return (
            "Compare the named ranks' data with the others': the same pipeline and preprocessing, labels "
            "aligned with their inputs, the same data set, shards drawn from shuffled data."
        )


@register(
    "GA964",
    "rank-loss-departs",
    severity="warning",
    needs=(RankLosses,),
    causes=(RankLossDeparts,),
    once="one finding per watched msrun job: every rank whose loss departs is named in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Under msrun, one rank's loss departs from the other ranks' far beyond the run's own noise.

    What it does:
        At every sampled step of a watched run under msrun the ranks' losses are all-gathered.
        Over at least 8 sampled steps with finite losses, a rank's distance at a step is its
        loss's distance to the other rank's (two ranks) or to the median of all ranks' (three
        or more); the rank departs when the median of its distances, over the steps, is more
        than 3 times the run's noise: the step-to-step noise of a rank's loss
        (``1.4826 * median |diff| / sqrt(2)``), the lower median over the ranks (with two, the
        quieter rank's: a corrupt rank is often far noisier and must not widen the yardstick).
        So the rank is far away at most steps, not at a few. With two ranks the distance is
        symmetric and the data cannot tell which rank is wrong: both are named, the one with
        the higher mean loss first. With more, every rank far from the median is named; when
        all are, the ranks' losses disperse far above the run's noise.
        The threshold was measured on 2-rank jobs of a small MLP (6 seeds; 12 and 48 sampled
        steps; with and without BatchNorm): ranks reading their own shards of the same data
        reached at most 1.9 noises; a rank with its inputs scaled 10x (no BatchNorm) 3.2-12; a
        rank with permuted labels 1.8-3.5 after 48 steps, often under 1 in the first 12 (it
        shows once the clean ranks' loss falls). A rank reading another data set of the same
        kind is not seen with two ranks: the averaged model fits both equally badly. Shards
        split by class (a sorted data set) depart too (up to 12 noises): the shards differ.
        See docs/distributed.md for the table.

    Why is this bad:
        Data parallelism averages every rank's gradient into one update: a rank whose data is
        corrupt (labels shuffled or misaligned with the inputs, another preprocessing or
        scale, another data set) pulls every rank's weights towards the wrong answer, and
        its own loss, alone, looks like a hard shard. Each rank's log shows one healthy-
        looking run; only the ranks side by side show the one that does not fit.

    Example:
        ```python
        if get_rank() == 1:
            y = rng.permutation(y)  # rank 1's labels no longer match its inputs
        ```

    Use instead:
        ```python
        x, y = x[get_rank()::get_group_size()], y[get_rank()::get_group_size()]  # one pipeline, sharded
        ```
    """
    ranks = ctx.need(RankLosses)
    found = departures(ranks.steps)
    if found is None:
        return
    order = tuple(sorted(found.ranks, key=lambda r: -found.means[r]))
    cause = RankLossDeparts(
        int(ranks.world_size),
        order,
        tuple(float(m) for m in found.means),
        tuple(float(d) for d in found.distance),
        float(found.sigma),
        int(found.steps),
        DEPART,
    )
    yield ctx.finding(
        "warning", "(root)", cause, (g.cell_node(""),), subjects=tuple(f"rank {r}" for r in order)
    )

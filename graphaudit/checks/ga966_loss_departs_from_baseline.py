"""GA966 loss-departs-from-baseline."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.baseline import BLOCKS_OUT, LOSS_BAND, loss_blocks
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.baseline import WatchBaseline
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class LossDepartsFromBaseline(Cause):
    """The training loss left the band of a known-good run's, block by block of steps, at several blocks."""

    source: str  # where the baseline was read from
    out: int  # the blocks outside the band
    above: int  # how many of them lie above the baseline (the others below)
    blocks: int  # the blocks compared
    size: int  # the steps of a block
    first: tuple[int, int]  # the steps of the first block outside the band
    first_here: float  # this run's median loss there
    first_baseline: float  # the baseline's
    worst: tuple[int, int]  # the steps of the block farthest outside
    worst_here: float
    worst_baseline: float
    worst_z: float  # how far apart there, in units of the baseline's step-to-step noise
    worst_sigma: float  # that noise
    band: float  # the band's half-width, in those units

    def message(self) -> str:
        way = (
            "above it (this run learns worse)"
            if self.above == self.out
            else "below it (this run learns faster: its recipe is not the baseline's)"
            if self.above == 0
            else f"above it in {self.above} and below it in {self.out - self.above}"
        )
        return (
            f"The training loss left the band of the baseline ({self.source}) in {self.out} of "
            f"{self.blocks} blocks of {self.size} steps, {way}: first at steps {self.first[0]}-{self.first[1]} "
            f"(median {self.first_here:.4g}, the baseline's {self.first_baseline:.4g}), farthest at steps "
            f"{self.worst[0]}-{self.worst[1]} ({self.worst_here:.4g} against {self.worst_baseline:.4g}: "
            f"{self.worst_z:.1f} times the baseline's step-to-step noise there, {self.worst_sigma:.3g}; the band "
            f"is {self.band:g} times it)."
        )

    def fix(self) -> str:
        return (
            "Compare this run's recipe with the baseline's: the learning rate and its schedule (a warm-up), "
            "the parameters the optimizer holds (a frozen layer), the data and its preprocessing, the "
            "initialisation; the per-parameter comparisons with the baseline (gradients, updates) name the "
            "layers that differ, when they do."
        )


@register(
    "GA966",
    "loss-departs-from-baseline",
    severity="warning",
    needs=(TrainingRun, WatchBaseline),
    causes=(LossDepartsFromBaseline,),
    once="one finding per watched run: its one loss curve against the baseline's",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The training loss leaves the band of a known-good run of the same recipe, at the same steps.

    What it does:
        Compares the watched run's loss with the baseline's (``Watch(baseline=...)``: the
        ``samples.jsonl`` of an earlier, healthy run) at the same steps, in blocks of a
        twentieth of the run (5 steps at least): the median of each run over the block, their
        difference in units of the baseline's own step-to-step noise there. A block is outside
        the band beyond 5 times that noise; the check fires when 2 blocks or more are, above
        the baseline (the run learns worse) or below it (it learns faster: the recipe changed).
        Measured on a digits MLP (168 steps): healthy reruns (another data order, another
        initialisation) stay within 3.9 times the noise; a layer left out of the optimizer
        reached 10, a 10x learning rate 74, a dropped warm-up 21 (below). See ``docs/watch.md``.

    Why is this bad:
        The same recipe should learn the same way: a loss curve outside a healthy run's band
        says something in the recipe changed (the learning rate or its schedule, a frozen
        layer, the data or its preprocessing, a library upgrade), often before any absolute
        rule (GA951, GA952) can tell. This is TrainCheck's and SageMaker Debugger's
        ``similar_across_runs`` check.

    Example:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9)  # the baseline's run warmed up
        model.train(4, data, callbacks=[graphaudit.Watch(baseline="good_run/samples.jsonl")])
        ```

    Use instead:
        ```python
        rates = [0.05 * min(1.0, (i + 1) / 56) for i in range(4 * 56)]  # its one-epoch warm-up
        optimizer = nn.Momentum(net.trainable_params(), rates, 0.9)
        model.train(4, data, callbacks=[graphaudit.Watch(baseline="good_run/samples.jsonl")])
        ```
    """
    record = ctx.need(TrainingRun).record
    baseline = ctx.need(WatchBaseline).baseline
    blocks = loss_blocks(baseline.losses, record.losses)
    out = [b for b in blocks if abs(b.z) >= LOSS_BAND]
    if len(out) < BLOCKS_OUT:
        return
    first, worst = out[0], max(out, key=lambda b: abs(b.z))
    cause = LossDepartsFromBaseline(
        baseline.source,
        len(out),
        sum(b.z > 0 for b in out),
        len(blocks),
        first.last - first.first + 1,
        (first.first, first.last),
        float(first.here),
        float(first.baseline),
        (worst.first, worst.last),
        float(worst.here),
        float(worst.baseline),
        float(abs(worst.z)),
        float(worst.sigma),
        LOSS_BAND,
    )
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

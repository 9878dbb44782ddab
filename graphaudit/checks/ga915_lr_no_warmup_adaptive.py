"""GA915 lr-no-warmup-adaptive."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lr_groups import group_of_schedule, schedule_words
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Cause, Finding

LARGE_PEAK = 3e-3  # 3x Adam's default of 1e-3 (Kingma & Ba 2015); ViT trains at 3e-3 with a 10k-step warm-up
WARM = 0.5  # a schedule starting at half its peak or more has no warm-up


@dataclass(frozen=True)
class NoWarmUpAdaptive(Cause):
    """An adaptive optimizer that starts at a large learning rate with no warm-up."""

    optimizer: str  # the optimizer's class
    group: int | None  # the parameter group, when the optimizer has several
    schedule: str  # its kind: "fixed", "list" or "cell"
    cell: str  # the schedule cell's class, for a "cell"
    length: int  # how many values of it were read
    start: float  # the rate at the first step
    peak: float  # the schedule's largest rate
    large: float  # the rate from which an adaptive optimizer wants a warm-up

    def message(self) -> str:
        what = schedule_words(self.group, self.schedule, self.cell, self.length)
        return (
            f"{self.optimizer} starts at a learning rate of {self.start:g} ({what[0].lower()}{what[1:]}, peak "
            f"{self.peak:g}) with no warm-up: for an adaptive optimizer a rate of {self.large:g} or more wants a "
            "warm-up, while its moment estimates are made from a handful of gradients."
        )

    def fix(self) -> str:
        return (
            "Warm the rate up linearly from about 0 over the first few epochs (nn.warmup_lr, or a "
            "warm-up + cosine list), or start lower."
        )


@register(
    "GA915",
    "lr-no-warmup-adaptive",
    severity="warning",
    needs=(LearningRates,),
    causes=(NoWarmUpAdaptive,),
    once="one finding per learning-rate schedule: each parameter group's schedule is written on its own, its parameters listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An Adam-type optimizer started at a large learning rate, without warm-up.

    What it does:
        For an optimizer of the Adam family (``nn.Adam``, ``nn.AdamWeightDecay``, ``Lamb``,
        ``AdaMax``, mindcv's ``AdamW``...), reports each learning-rate group whose schedule
        peaks at 3e-3 or more and already starts at half of that peak or more (a fixed rate
        included): no warm-up.

    Why is this bad:
        Adam's per-parameter step is normalised by a second-moment estimate made from very
        few gradients at the start; its variance is large, and large early steps can send
        training to a bad region it never leaves (Liu et al. 2020, "On the Variance of the
        Adaptive Learning Rate and Beyond"; Vaswani et al. 2017 warm up for this reason).
        Recipes that use such rates warm up (ViT: 3e-3 over 10k steps; BERT 1e-4 over 10k).
        The bound is 3x Adam's default of 1e-3 (Kingma & Ba 2015), which small networks use
        without warm-up. A heuristic: a warning.

    Example:
        ```python
        optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-2)
        ```

    Use instead:
        ```python
        warmup = nn.warmup_lr(1e-2, total_step, step_per_epoch, warmup_epoch=5)
        decay = nn.cosine_decay_lr(1e-5, 1e-2, total_step, step_per_epoch, decay_epoch=epochs)
        lr = [min(w, d) if i < 5 * step_per_epoch else d for i, (w, d) in enumerate(zip(warmup, decay))]
        optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=lr)
        ```
    """
    rates = ctx.need(LearningRates)
    if not rates.adaptive:
        return
    for schedule in rates.schedules:
        if not schedule.values or schedule.peak < LARGE_PEAK or schedule.values[0] < WARM * schedule.peak:
            continue
        group = group_of_schedule(ctx, schedule)
        cause = NoWarmUpAdaptive(
            rates.optimizer,
            schedule.group if len(rates.schedules) > 1 else None,
            schedule.kind,
            schedule.cell,
            len(schedule.values),
            float(schedule.values[0]),
            float(schedule.peak),
            LARGE_PEAK,
        )
        yield ctx.finding("warning", group.subject, cause, group.graph_nodes, subjects=group.names)

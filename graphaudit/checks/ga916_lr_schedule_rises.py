"""GA916 lr-schedule-rises."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.lr_groups import group_of_schedule, schedule_words
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Cause, Finding

LATE = 0.9  # a maximum first reached in the last 10% of the schedule: it rises to the end


@dataclass(frozen=True)
class ScheduleRises(Cause):
    """A learning-rate schedule that rises to its end and never decreases."""

    group: int | None  # the parameter group, when the optimizer has several
    schedule: str  # its kind: "fixed", "list" or "cell"
    cell: str  # the schedule cell's class, for a "cell"
    length: int  # how many values of it were read
    first: float  # the rate at the first step read
    first_step: int
    last: float  # the rate at the last step read
    last_step: int

    def message(self) -> str:
        return (
            f"{schedule_words(self.group, self.schedule, self.cell, self.length)} rises from {self.first:g} at step "
            f"{self.first_step} to {self.last:g} at step {self.last_step} and never decreases: the rate "
            "is largest at the end of training, where a decay should make it smallest."
        )

    def fix(self) -> str:
        return (
            "Swap the schedule's start and end rates (learning_rate/end_learning_rate, max_lr/min_lr), or "
            "use a decay_rate below 1."
        )


@register(
    "GA916",
    "lr-schedule-rises",
    severity="warning",
    needs=(LearningRates,),
    causes=(ScheduleRises,),
    once="one finding per learning-rate schedule: each parameter group's schedule is written on its own, its parameters listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A learning-rate schedule that ends above where it starts and peaks only at its end: a decay set up backwards.

    What it does:
        Reads each learning-rate group's schedule (a ``nn.dynamic_lr`` list, or a
        ``LearningRateSchedule`` cell at sampled steps) and reports one that never
        decreases, ends more than 1% above its first value, and first reaches its maximum
        in the last 10% of its steps. Warm-up cells (``WarmUpLR``, a class named ``*Warm*``)
        are left out: rising is what they do.

    Why is this bad:
        Decay schedules are easy to set up backwards without any error: the start and end
        rates swapped (``nn.PolynomialDecayLR(1e-5, 0.1, ...)``: MindSpore 2.10 checks
        ``min_lr < max_lr`` in ``nn.cosine_decay_lr`` but not this), a ``decay_rate`` above
        1 in ``ExponentialDecayLR``, a hand-written list computed the wrong way round. The
        rate then grows through training and is largest when it should be smallest. A
        warm-up followed by a constant rate peaks early and is not reported.

    Example:
        ```python
        lr = nn.PolynomialDecayLR(learning_rate=1e-5, end_learning_rate=0.1, decay_steps=1000, power=1.0)
        ```

    Use instead:
        ```python
        lr = nn.PolynomialDecayLR(learning_rate=0.1, end_learning_rate=1e-5, decay_steps=1000, power=1.0)
        ```
    """
    rates = ctx.need(LearningRates)
    for schedule in rates.schedules:
        values = schedule.values
        if len(values) < 3 or schedule.kind == "fixed" or "warm" in schedule.cell.lower():
            continue
        never_falls = all(b >= a for a, b in zip(values, values[1:]))
        peak_at = next(i for i, v in enumerate(values) if v == schedule.peak)
        if not (
            never_falls
            and values[-1] > values[0] * 1.01
            and schedule.steps[peak_at] >= LATE * schedule.steps[-1]
        ):
            continue
        group = group_of_schedule(ctx, schedule)
        cause = ScheduleRises(
            schedule.group if len(rates.schedules) > 1 else None,
            schedule.kind,
            schedule.cell,
            len(values),
            float(values[0]),
            int(schedule.steps[0]),
            float(values[-1]),
            int(schedule.steps[-1]),
        )
        yield ctx.finding("warning", group.subject, cause, group.graph_nodes, subjects=group.names)

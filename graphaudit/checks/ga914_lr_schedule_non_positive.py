"""GA914 lr-schedule-non-positive."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.curves import plain_number
from graphaudit.checks._shared.grouping import GroupedCause
from graphaudit.checks._shared.lr_groups import group_of_schedule, schedule_words
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Finding

ZERO_SHARE = 0.10  # more steps than this at rate 0 is wasted training


@dataclass(frozen=True)
class _ScheduleOfGroup(GroupedCause):
    """A parameter group's learning-rate schedule and the parameters that follow it: the base of GA914's causes."""

    subject: str  # the cell holding the group's parameters, or the parameter
    names: tuple[str, ...]  # the group's parameters
    whole_cell: bool  # the subject is a cell all of whose parameters are the group's
    note: str  # a lone parameter's Parameter.name, when it differs from its path
    group: int | None  # the parameter group, when the optimizer has several
    schedule: str  # its kind: "fixed", "list" or "cell"
    cell: str  # the schedule cell's class, for a "cell"
    length: int  # how many values of it were read

    def _what(self) -> str:
        return schedule_words(self.group, self.schedule, self.cell, self.length)


@dataclass(frozen=True)
class LearningRateNegative(_ScheduleOfGroup):
    """A learning-rate schedule with negative or NaN values."""

    names_subjects = True
    step: int = 0  # the first such step
    value: float | str = 0.0  # its value (a non-finite one as its word: "nan", "-inf")
    bad: int = 0  # how many steps read are negative or NaN

    def message(self) -> str:
        return (
            f"{self._what()} is {float(self.value):g} at step {self.step} ({self.bad} of the {self.length} steps read "
            "are negative or NaN): a negative rate climbs the loss, a NaN one makes every weight NaN. It applies to "
            f"{self.described()}."
        )

    def fix(self) -> str:
        return "Check the schedule's arguments (end_learning_rate, min_lr, decay_rate): every value must be positive."


@dataclass(frozen=True)
class LearningRateAlwaysZero(_ScheduleOfGroup):
    """A learning-rate schedule that is 0 at every step: its parameters never train."""

    names_subjects = True

    def message(self) -> str:
        return f"{self._what()} is 0 at every step: {self.described()} never train."

    def fix(self) -> str:
        return (
            "Give the group a positive learning rate, or freeze it explicitly (requires_grad=False and "
            "leave it out of the optimizer)."
        )


@dataclass(frozen=True)
class LearningRateOftenZero(_ScheduleOfGroup):
    """A learning-rate schedule that is 0 at more than 10% of its steps: those steps change nothing."""

    zeros: int = 0  # the steps at rate 0
    first_zero: int = 0  # the first of them

    def message(self) -> str:
        return (
            f"{self._what()} is 0 at {self.zeros} of the {self.length} steps read (from step {self.first_zero}): "
            "those training steps change nothing."
        )

    def fix(self) -> str:
        return (
            "End the decay at a small positive rate (end_learning_rate=1e-5 or min_lr > 0), or make the "
            "schedule as long as the training (total_steps=...)."
        )


@register(
    "GA914",
    "lr-schedule-non-positive",
    severity="error",
    also=("warning",),
    needs=(LearningRates,),
    causes=(LearningRateNegative, LearningRateAlwaysZero, LearningRateOftenZero),
    once="one finding per learning-rate schedule: each parameter group's schedule is written on its own, its parameters listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A learning-rate schedule that is negative or NaN somewhere, zero throughout, or zero for much of training.

    What it does:
        Reads each learning-rate group's schedule without training (a fixed value, a list
        from ``nn.dynamic_lr``, a ``LearningRateSchedule`` cell evaluated at sampled steps
        up to ``total_steps=`` or its own decay/warm-up steps). A negative or NaN rate is an
        error; a rate that is 0 at every step, or at more than 10% of the steps, a warning.

    Why is this bad:
        A negative learning rate climbs the loss instead of descending it, and a NaN one
        turns every weight into NaN at the first update; neither raises an error. A rate of
        0 wastes those steps: a ``PolynomialDecayLR`` or a list that reaches ``end_lr=0``
        long before the last epoch, a warm-up list whose first epochs are all 0. A group
        given 0 on purpose (a frozen backbone) is better frozen with ``requires_grad=False``,
        hence only a warning for zeros.

    Example:
        ```python
        lr = [0.1 - 0.001 * step for step in range(total_steps)]  # negative after step 100
        optimizer = nn.Momentum(net.trainable_params(), lr, 0.9)
        ```

    Use instead:
        ```python
        lr = nn.polynomial_decay_lr(0.1, 1e-5, total_steps, step_per_epoch, decay_epoch=epochs, power=1.0)
        ```
    """
    rates = ctx.need(LearningRates)
    for schedule in rates.schedules:
        values = schedule.values
        if not values:
            continue
        group = group_of_schedule(ctx, schedule)
        facts = (
            group.subject,
            group.names,
            group.cell is not None,
            group.note,
            schedule.group if len(rates.schedules) > 1 else None,
            schedule.kind,
            schedule.cell,
            len(values),
        )
        bad = [(s, v) for s, v in zip(schedule.steps, values) if math.isnan(v) or v < 0]
        zeros = [s for s, v in zip(schedule.steps, values) if v == 0.0]
        if bad:
            step, value = bad[0]
            cause = LearningRateNegative(*facts, int(step), plain_number(value), len(bad))
            yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)
        elif len(zeros) == len(values):
            cause = LearningRateAlwaysZero(*facts)
            yield ctx.finding("warning", group.subject, cause, group.graph_nodes, subjects=group.names)
        elif len(zeros) > ZERO_SHARE * len(values):
            cause = LearningRateOftenZero(*facts, len(zeros), int(zeros[0]))
            yield ctx.finding("warning", group.subject, cause, group.graph_nodes, subjects=group.names)

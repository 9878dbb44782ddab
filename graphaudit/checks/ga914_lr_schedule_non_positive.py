"""GA914 lr-schedule-non-positive."""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.lr_groups import describe_schedule, group_of_schedule
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.schedule import LearningRates
from graphaudit.findings import Finding

ZERO_SHARE = 0.10  # more steps than this at rate 0 is wasted training


@register(
    "GA914",
    "lr-schedule-non-positive",
    severity="error",
    also=("warning",),
    needs=(LearningRates,),
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
        what = describe_schedule(schedule, len(rates.schedules))
        bad = [(s, v) for s, v in zip(schedule.steps, values) if math.isnan(v) or v < 0]
        zeros = [s for s, v in zip(schedule.steps, values) if v == 0.0]
        if bad:
            step, value = bad[0]
            yield ctx.finding(
                "error",
                group.subject,
                f"{what} is {value:g} at step {step} ({len(bad)} of the "
                f"{len(values)} steps read are negative or NaN): a negative rate climbs the loss, a NaN "
                f"one makes every weight NaN. It applies to {group.describe('parameter')}.",
                "Check the schedule's arguments (end_learning_rate, min_lr, decay_rate): every value must "
                "be positive.",
                group.graph_nodes,
                subjects=group.names,
            )
        elif len(zeros) == len(values):
            yield ctx.finding(
                "warning",
                group.subject,
                f"{what} is 0 at every step: {group.describe('parameter')} never train.",
                "Give the group a positive learning rate, or freeze it explicitly (requires_grad=False and "
                "leave it out of the optimizer).",
                group.graph_nodes,
                subjects=group.names,
            )
        elif len(zeros) > ZERO_SHARE * len(values):
            yield ctx.finding(
                "warning",
                group.subject,
                f"{what} is 0 at {len(zeros)} of the {len(values)} steps read (from step "
                f"{zeros[0]}): those training steps change nothing.",
                "End the decay at a small positive rate (end_learning_rate=1e-5 or min_lr > 0), or make the "
                "schedule as long as the training (total_steps=...).",
                group.graph_nodes,
                subjects=group.names,
            )

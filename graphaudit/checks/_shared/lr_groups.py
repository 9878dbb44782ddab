"""Who a learning-rate schedule finding is about: the parameters of the schedule's group (GA914-GA916).

Example:
    >>> from mindspore import nn
    >>> from graphaudit.capture.training.lr_schedules import read_schedules
    >>> from graphaudit.checks.context import AuditContext
    >>> net = nn.SequentialCell([nn.Dense(2, 2), nn.Dense(2, 2)])
    >>> optimizer = nn.SGD(net.trainable_params(), 0.1)
    >>> group_of_schedule(AuditContext.build(net, optimizer), read_schedules(optimizer)[0]).subject
    '(root)'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphaudit import graph as g
from graphaudit.checks._shared.grouping import Group, one_group

if TYPE_CHECKING:
    from graphaudit.capture.training.lr_schedules import Schedule
    from graphaudit.checks.context import AuditContext

__all__ = ["describe_schedule", "group_of_schedule", "schedule_words"]


def group_of_schedule(ctx: AuditContext, schedule: Schedule) -> Group:
    """The group of the network's parameters that follow *schedule* (the root when none is the network's)."""
    nodes = [n for p in schedule.parameters if (n := ctx.parameter_node(p)) is not None]
    found = one_group(ctx, nodes)
    if found:
        return found[0]
    return Group("(root)", ("(root)",), (), g.cell_node(""))


def describe_schedule(schedule: Schedule, groups: int) -> str:
    """``The learning rate (a list of 100 per-step values)``, ``Group 1's learning rate (CosineDecayLR)``."""
    return schedule_words(
        schedule.group if groups > 1 else None, schedule.kind, schedule.cell, len(schedule.values)
    )


def schedule_words(group: int | None, kind: str, cell: str, length: int) -> str:
    """:func:`describe_schedule` from a cause's facts: the group (``None``: the only one), the kind, its cell, its length.

    Example:
        >>> schedule_words(None, "list", "", 100), schedule_words(1, "cell", "CosineDecayLR", 50)
        ('The learning rate (a list of 100 per-step values)', "Group 1's learning rate (CosineDecayLR)")
    """
    what = {"list": f"a list of {length} per-step values", "cell": cell}.get(kind, "a fixed value")
    owner = f"Group {group}'s learning rate" if group is not None else "The learning rate"
    return f"{owner} ({what})"

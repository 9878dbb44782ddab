"""Read an optimizer's learning-rate schedules without training: one per learning-rate group.

An optimizer holds its learning rate as a fixed value, as a list of one value per step
(``nn.dynamic_lr`` functions, ``nn.cosine_decay_lr(...)`` given as ``learning_rate=``, which
MindSpore keeps as a 1-D ``Parameter`` indexed by ``global_step``), or as a
``LearningRateSchedule`` cell (``nn.CosineDecayLR``, ``nn.WarmUpLR``, a recipe's own) called
with ``global_step``; each parameter group may have its own. :func:`read_schedules` reads
every group's: a list as it is, a cell evaluated at sampled steps from 0 to a horizon (the
``total_steps`` given, else the largest ``*steps*`` attribute in the cell, else 1000),
in PyNative mode (the context is put back). Evaluating a schedule cell changes nothing.

Example:
    >>> from mindspore import nn
    >>> net = nn.Dense(2, 2)
    >>> optimizer = nn.Momentum(net.trainable_params(), nn.cosine_decay_lr(0.0, 0.1, 6, 2, 3), 0.9)
    >>> (schedule,) = read_schedules(optimizer)
    >>> schedule.kind, [round(v, 3) for v in schedule.values]
    ('list', [0.1, 0.1, 0.075, 0.075, 0.025, 0.025])
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, NamedTuple

import numpy as np

__all__ = ["DEFAULT_HORIZON", "Schedule", "ScheduledRate", "read_schedules"]

DEFAULT_HORIZON = 1000
_SAMPLES = 200
_LATER = (1, 2, 5, 10, 100, 1000, 10000)  # steps after the current one at which a cell is also read


class ScheduledRate(NamedTuple):
    """The learning rate at ``step``; for a schedule, the first later step at which it is non-zero."""

    value: float
    step: int
    scheduled: bool  # a list or a LearningRateSchedule: the value changes with the step
    first_nonzero_step: int | None = None
    first_nonzero: float | None = None

    @property
    def warms_up(self) -> bool:
        """Zero now, non-zero at a later step of the schedule (a warm-up from 0)."""
        return self.scheduled and self.value == 0.0 and self.first_nonzero_step is not None


@dataclass(frozen=True)
class Schedule:
    """The learning rate of one group: ``values`` at ``steps`` (every step for a list).

    ``kind`` is ``"fixed"``, ``"list"`` or ``"cell"``; ``cell`` the schedule cell's class
    name; ``parameters`` the group's Parameters (in the optimizer's order); ``start`` the
    optimizer's ``global_step`` when it was read (the step the next update uses).
    """

    group: int
    kind: str
    steps: tuple[int, ...]
    values: tuple[float, ...]
    parameters: tuple[Any, ...]
    cell: str = ""
    start: int = 0
    current: float | None = None  # a cell's rate at ``start``, also when ``start`` is past its span

    @property
    def peak(self) -> float:
        return max(self.values) if self.values else 0.0

    @property
    def length(self) -> int:
        """The steps the schedule covers (its last sampled step + 1)."""
        return (self.steps[-1] + 1) if self.steps else 0

    def now(self) -> ScheduledRate | None:
        """The rate the next update uses (at ``start``) and the first later non-zero one.

        Example:
            >>> Schedule(0, "list", (0, 1, 2), (0.0, 0.5, 0.25), ()).now()
            ScheduledRate(value=0.0, step=0, scheduled=True, first_nonzero_step=1, first_nonzero=0.5)
            >>> Schedule(0, "cell", (0, 99), (0.1, 0.01), (), "CosineDecayLR", 500, 0.0).now()  # past its span
            ScheduledRate(value=0.0, step=500, scheduled=True, first_nonzero_step=None, first_nonzero=None)
        """
        if not self.values:
            return None
        if self.kind == "fixed":
            return ScheduledRate(self.values[0], self.start, False)
        index = min(self.start, len(self.values) - 1) if self.kind == "list" else None
        if index is None:  # a cell, read at sampled steps that include the start within its span
            if self.start not in self.steps:  # past the span: the rate now, no later step read
                return None if self.current is None else ScheduledRate(self.current, self.start, True)
            index = self.steps.index(self.start)
        later = [(s, v) for s, v in zip(self.steps[index:], self.values[index:]) if v != 0.0]
        first = later[0] if later else (None, None)
        return ScheduledRate(self.values[index], self.start, True, *first)


def _horizon(cell: Any, total_steps: int | None) -> int:
    if total_steps:
        return int(total_steps)
    found = []
    for _, sub in cell.cells_and_names():
        for name, value in vars(sub).items():
            if (
                "step" in name.lower()
                and isinstance(value, int)
                and not isinstance(value, bool)
                and value > 0
            ):
                found.append(value)
    return max(found) if found else DEFAULT_HORIZON


def _evaluate(cell: Any, steps: list[int]) -> list[float]:
    import mindspore as ms
    from mindspore import Tensor

    before = ms.get_context("mode")
    if before != ms.PYNATIVE_MODE:
        ms.set_context(mode=ms.PYNATIVE_MODE)
    try:
        out = []
        for step in steps:
            value = cell(Tensor(np.array([step], np.int32)))
            out.append(float(np.asarray(value.asnumpy(), np.float64).reshape(-1)[0]))
        return out
    finally:
        if ms.get_context("mode") != before:
            ms.set_context(mode=before)


def _sampled(horizon: int) -> list[int]:
    head = range(min(horizon, 50))
    spread = np.linspace(0, max(horizon - 1, 0), _SAMPLES).round().astype(int)
    return sorted({*head, *(int(s) for s in spread)})


def _lr_objects(optimizer: Any) -> list[tuple[Any, Any]]:
    """``(parameter, its learning-rate object)`` for every parameter, as ``get_lr_parameter`` reads them.

    Read from the optimizer's lists directly: ``get_lr_parameter`` scans every parameter for
    each one asked about, quadratic in a network's size (10 s for 10,000 parameters).
    """
    params = list(optimizer.parameters)
    if getattr(optimizer, "is_group_lr", False):
        rates = list(optimizer.learning_rate)  # one per parameter, in the parameters' order
        if len(rates) != len(params):
            raise ValueError("the learning rates do not line up with the parameters")
    else:
        rates = [optimizer.learning_rate] * len(params)
    return [(param, _unwrapped(rate)) for param, rate in zip(params, rates)]


def _unwrapped(rate: Any) -> Any:
    """The list or schedule MindSpore wraps a dynamic learning rate in (``_ConvertToCell``...)."""
    if type(rate).__name__ in ("_ConvertToCell", "_IteratorLearningRate"):
        return rate.learning_rate
    return rate


def read_schedules(optimizer: Any, total_steps: int | None = None) -> list[Schedule]:
    """One :class:`Schedule` per learning-rate group of *optimizer* (see the module docstring)."""
    from mindspore import Tensor
    from mindspore.nn.learning_rate_schedule import LearningRateSchedule

    groups: dict[int, tuple[Any, list[Any]]] = {}
    try:
        rates = _lr_objects(optimizer)
    except Exception:
        return []  # an optimizer that keeps its rate some other way: nothing to read
    start = _current_step(optimizer)
    for param, rate in rates:
        groups.setdefault(id(rate), (rate, []))[1].append(param)
    schedules = []
    for index, (rate, params) in enumerate(groups.values()):
        if isinstance(rate, LearningRateSchedule):
            horizon = _horizon(rate, total_steps)
            later = (
                s for s in (start, *(start + d for d in _LATER)) if s < horizon
            )  # the schedule's own span
            steps = sorted({*_sampled(horizon), *later})
            values = _evaluate(rate, steps)
            current = values[steps.index(start)] if start in steps else _evaluate(rate, [start])[0]
            cell = type(rate).__name__
            schedules.append(
                Schedule(index, "cell", tuple(steps), tuple(values), tuple(params), cell, start, current)
            )
        elif isinstance(rate, Tensor):
            flat = np.asarray(rate.asnumpy(), np.float64).reshape(-1)
            kind = "list" if flat.size > 1 else "fixed"
            schedules.append(
                Schedule(
                    index,
                    kind,
                    tuple(range(flat.size)),
                    tuple(float(v) for v in flat),
                    tuple(params),
                    "",
                    start,
                )
            )
    return schedules


def _current_step(optimizer: Any) -> int:
    """The optimizer's ``global_step``: the step its next update reads the schedule at."""
    step = getattr(optimizer, "global_step", None)
    if step is None:
        return 0
    try:
        return int(np.asarray(step.asnumpy() if hasattr(step, "asnumpy") else step).reshape(-1)[0])
    except Exception:  # a step kept some other way: from the start
        return 0

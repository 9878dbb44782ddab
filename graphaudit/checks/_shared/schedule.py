"""The learning rate an optimizer applies to a parameter at its current step (shared by the probe checks).

A training recipe often gives the learning rate as a schedule: a list of one value per step
(``nn.Momentum(groups, learning_rate=[...])``, mindocr's ``warmup_cosine_decay``, mindyolo's
per-group warm-up lists) or a ``LearningRateSchedule`` cell, indexed by the optimizer's
``global_step``. A warm-up that starts from 0 makes the first step change nothing, by design.
:func:`learning_rate_now` reads the value the next step uses (the probe step ran at the
current ``global_step``, and put it back), and whether a later step of the schedule is
non-zero. It reads values only; a schedule cell is evaluated, which changes nothing.

Example:
    >>> from mindspore import nn
    >>> net = nn.Dense(2, 2)
    >>> optimizer = nn.Momentum(net.trainable_params(), learning_rate=[0.0, 0.5, 0.25], momentum=0.9)
    >>> learning_rate_now(optimizer, net.weight)
    ScheduledRate(value=0.0, step=0, scheduled=True, first_nonzero_step=1, first_nonzero=0.5)
"""

from __future__ import annotations

from typing import Any, NamedTuple

import numpy as np

__all__ = ["ScheduledRate", "learning_rate_now"]

_PROBED_STEPS = (1, 2, 5, 10, 100, 1000, 10000)  # later steps at which a schedule cell is evaluated


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


def _scalar(value: Any) -> float:
    return float(
        np.asarray(value.asnumpy() if hasattr(value, "asnumpy") else value, np.float64).reshape(-1)[0]
    )


def learning_rate_now(
    optimizer: Any, param: Any, cache: dict[int, Any] | None = None
) -> ScheduledRate | None:
    """The learning rate *optimizer* applies to *param* at its current step, or ``None`` when unknown.

    *cache* (a dict the caller keeps) holds the answer for each learning-rate object, so that
    the parameters of one group are read once.
    """
    try:
        rate = optimizer.get_lr_parameter(param)
        if isinstance(rate, (list, tuple)):
            rate = rate[0]
    except Exception:  # an optimizer that keeps its rate in some other way: unknown
        return None
    if cache is None:
        return _rate_now(optimizer, rate)
    if id(rate) not in cache:
        cache[id(rate)] = _rate_now(optimizer, rate)
    return cache[id(rate)]


def _rate_now(optimizer: Any, rate: Any) -> ScheduledRate | None:
    from mindspore import Tensor
    from mindspore.nn.learning_rate_schedule import LearningRateSchedule

    try:
        step_param = getattr(optimizer, "global_step", None)
        step = int(_scalar(step_param)) if step_param is not None else 0
        if isinstance(rate, LearningRateSchedule):
            value = _scalar(rate(Tensor(np.array([step], np.int32))))
            for later in _PROBED_STEPS:
                found = _scalar(rate(Tensor(np.array([step + later], np.int32))))
                if found != 0.0:
                    return ScheduledRate(value, step, True, step + later, found)
            return ScheduledRate(value, step, True)
        if isinstance(rate, Tensor) and rate.size > 1:
            values = np.asarray(rate.asnumpy(), np.float64).reshape(-1)
            index = min(step, values.size - 1)
            later = np.flatnonzero(values[index:])
            if later.size:
                first = index + int(later[0])
                return ScheduledRate(float(values[index]), step, True, first, float(values[first]))
            return ScheduledRate(float(values[index]), step, True)
        if isinstance(rate, Tensor):
            return ScheduledRate(_scalar(rate), step, False)
    except Exception:  # an optimizer that keeps its rate in some other way: unknown
        return None
    return None

"""What an optimizer holds: the parameters it updates, their weight decay, and its own state.

Example:
    >>> from mindspore import nn
    >>> net = nn.Dense(3, 2)
    >>> [(e.parameter.name, e.weight_decay) for e in optimizer_entries(nn.SGD(net.trainable_params(), weight_decay=0.25))]
    [('weight', 0.25), ('bias', 0.25)]
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from mindspore import Parameter, ParameterTuple, nn

from graphaudit.errors.arguments import checked_call

__all__ = ["OptimizerEntry", "optimizer_entries", "optimizer_state_parameters", "unique"]


@dataclass(frozen=True)
class OptimizerEntry:
    """One parameter as the optimizer holds it, with the weight decay applied to it.

    ``weight_decay`` is ``nan`` when it is a schedule (a Cell) whose value is not fixed.
    """

    parameter: Parameter
    weight_decay: float


def _as_float(value: Any) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return float("nan")


def optimizer_entries(optimizer: nn.Optimizer) -> list[OptimizerEntry]:
    """Every parameter of ``optimizer.parameters``, in order, with its weight decay."""
    params = list(optimizer.parameters)
    decay_flags = list(getattr(optimizer, "decay_flags", ()) or ())
    if getattr(optimizer, "is_group", False):
        decays = [_as_float(v) for v in getattr(optimizer, "group_weight_decay", [])]
    else:
        decays = [_as_float(getattr(optimizer, "weight_decay", 0.0))] * len(params)
    entries = []
    for index, param in enumerate(params):
        decay = decays[index] if index < len(decays) else 0.0
        if index < len(decay_flags) and not decay_flags[index]:
            decay = 0.0  # the optimizer's decay_filter excluded this parameter
        entries.append(OptimizerEntry(param, decay))
    return entries


def unique(items: Iterable[Any]) -> list[Any]:
    """*items* without ``None`` and without repeats (by identity), in order."""
    seen: dict[int, Any] = {}
    for item in items:
        if item is not None and id(item) not in seen:
            seen[id(item)] = item
    return list(seen.values())


@checked_call
def optimizer_state_parameters(optimizer: nn.Cell) -> list[Parameter]:
    """Every Parameter an optimizer holds: the ones it updates and all of its own state.

    Union of ``get_parameters()``, ``parameters_and_names()``, ``_params`` and every
    ``Parameter`` / ``ParameterTuple`` attribute of the optimizer and its sub-cells (moments,
    accumulators, ``global_step``, the learning rate, ``beta1_power``...).

    Example:
        >>> from mindspore import nn
        >>> net = nn.Dense(3, 2)
        >>> names = [p.name for p in optimizer_state_parameters(nn.Adam(net.trainable_params()))]
        >>> "global_step" in names and "moment1.weight" in names
        True
    """
    found: list[Any] = list(optimizer.get_parameters())
    found.extend(p for _, p in optimizer.parameters_and_names())
    for _, cell in optimizer.cells_and_names():
        found.extend(getattr(cell, "_params", {}).values())
        for value in vars(cell).values():
            if isinstance(value, Parameter):
                found.append(value)
            elif isinstance(value, (ParameterTuple, list, tuple)):
                found.extend(v for v in value if isinstance(v, Parameter))
    return unique(found)

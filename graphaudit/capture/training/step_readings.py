"""The numbers the probe reads from a training step: value copies, differences, norms, the learning rate.

Every function here reads; none changes a tensor. Norms are float32 dot products over
chunks, summed in float64 (as accurate as a float64 norm to ~1e-7, ten times faster on a
large model); a difference of two float32 values is exact when they are close, so an update
far below the weights' size (‖Δw‖ of 1e-9 next to weights of 1) is still measured.

Example:
    >>> import numpy as np
    >>> l2(np.array([3.0, 4.0], np.float32)), max_abs_diff(np.zeros(2), np.array([0.0, -2.0]))
    (5.0, 2.0)
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import numpy as np
from mindspore import Parameter, Tensor, nn

from graphaudit.capture.network.isolation import tensor_bytes
from graphaudit.capture.network.values import same_bits

__all__ = [
    "StepChange",
    "diff_norm",
    "grad_numbers",
    "groups_of",
    "l2",
    "learning_rate",
    "loss_value",
    "max_abs_diff",
    "values",
]


def values(params: Iterable[Parameter]) -> dict[int, np.ndarray]:
    """A copy of every parameter's values, by ``id``."""
    return {id(p): tensor_bytes(p) for p in params}


_CHUNK = 1 << 16  # float32 dot products over chunks this long, summed in float64: fast, and accurate to ~1e-7


def _numeric(array: np.ndarray) -> np.ndarray:
    flat = array.ravel()
    if flat.dtype == np.float32 or flat.dtype == np.float64:
        return flat
    return flat.astype(np.float32 if flat.dtype == np.float16 else np.float64)


def l2(array: np.ndarray) -> float:
    """The Euclidean norm of *array* (``nan``/``inf`` when it holds such values)."""
    flat = _numeric(array)
    if flat.size == 0:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        total = sum(
            float(np.dot(part, part)) for part in (flat[i : i + _CHUNK] for i in range(0, flat.size, _CHUNK))
        )
    return float(np.sqrt(total))


def diff_norm(before: np.ndarray, after: np.ndarray) -> float:
    """‖after - before‖ (0.0 when they are equal)."""
    if before.size == 0:
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        return l2(_numeric(after) - _numeric(before))


def max_abs_diff(before: np.ndarray, after: np.ndarray) -> float:
    """max |after - before| (0.0 when they are bit-identical)."""
    if before.size == 0 or same_bits(before, after):
        return 0.0
    with np.errstate(invalid="ignore", over="ignore"):
        # One float64 temporary, cast in chunks by the ufunc, instead of two widened copies.
        diff = np.subtract(after, before, dtype=np.float64)
        np.abs(diff, out=diff)
    return float(np.max(diff))


class StepChange:
    """How one parameter moved in the first step: each comparison made once.

    A step usually changes a parameter in one of its two parts (the forward pass moves
    BatchNorm's statistics, the optimizer the weights): when one part left it bit for bit
    the same, the whole step's change is the other part's, with no third comparison.
    """

    def __init__(self, before: np.ndarray, middle: np.ndarray, after: np.ndarray) -> None:
        forward_same = same_bits(before, middle)
        self.by_optimizer = not same_bits(middle, after)
        self.forward = 0.0 if forward_same else max_abs_diff(before, middle)
        self.optimizer = max_abs_diff(middle, after) if self.by_optimizer else 0.0
        if forward_same:
            self.changed, self.total = self.by_optimizer, self.optimizer
        elif not self.by_optimizer:
            self.changed, self.total = True, self.forward
        else:
            self.changed = not same_bits(before, after)
            self.total = max_abs_diff(before, after)


def grad_numbers(grad: Any, divide_by: float = 1.0) -> tuple[float, float, int, int]:
    """``(norm, max |g|, NaN count, Inf count)`` of a gradient, divided by *divide_by* (a loss scale)."""
    values_ = grad if isinstance(grad, np.ndarray) else tensor_bytes(grad)
    flat = _numeric(values_)
    if flat.size == 0:
        return 0.0, 0.0, 0, 0
    if np.isfinite(flat).all():
        # The common case, without a float64 copy of every gradient: the norm as l2() gives it
        # (what each step's record holds), max |g| exactly (float32 -> float is exact). A
        # float32 sum of squares can overflow where float64's does not: then the wide path.
        norm = l2(flat)
        if np.isfinite(norm):
            return norm / divide_by, float(max(-flat.min(), flat.max())) / divide_by, 0, 0
    wide = flat.astype(np.float64)
    nan = int(np.isnan(wide).sum())
    inf = int(np.isinf(wide).sum())
    with np.errstate(invalid="ignore", over="ignore"):
        norm = float(np.linalg.norm(wide)) / divide_by
        max_abs = float(np.max(np.abs(wide))) / divide_by
    return norm, max_abs, nan, inf


def loss_value(loss: Any) -> float:
    """The loss as one number: the mean of an unreduced loss; ``nan`` when it cannot be read."""
    try:
        return float(np.mean(tensor_bytes(loss).astype(np.float64)))
    except Exception:
        return float("nan")


def learning_rate(optimizer: nn.Optimizer, param: Parameter) -> float | None:
    """The fixed learning rate *optimizer* gives *param*; ``None`` for a schedule."""
    try:
        lr = optimizer.get_lr_parameter(param)
        if isinstance(lr, (list, tuple)):
            lr = lr[0]
        if isinstance(lr, Tensor) and lr.size == 1:
            return float(lr.asnumpy().reshape(()))
    except Exception:
        pass
    return None


def groups_of(optimizer: nn.Optimizer) -> dict[int, int]:
    """``id(Parameter) -> index`` of the optimizer's parameter group (by learning rate), 0 without groups."""
    found: dict[int, int] = {}
    if not getattr(optimizer, "is_group_lr", False):
        return {id(p): 0 for p in optimizer.parameters}
    keys: dict[int, int] = {}
    for param in optimizer.parameters:
        try:
            lr = optimizer.get_lr_parameter(param)
        except Exception:
            lr = None
        key = id(lr[0] if isinstance(lr, (list, tuple)) and lr else lr)
        found[id(param)] = keys.setdefault(key, len(keys))
    return found

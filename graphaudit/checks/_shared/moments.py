"""Moments of an array's finite values computed in float64 blocks, and of several parts put together.

What :func:`~graphaudit.checks._shared.data_stats.column_stats` measures a batch with: never a
float64 copy of the whole batch (a 32x3x224x224 float32 batch is 18 MiB; its copy, 110 MiB),
and the statistics of the whole from its channels' without another pass.

Example:
    >>> import numpy as np
    >>> parts = [moments(np.array([1.0, 2.0])), moments(np.array([3.0, np.nan]))]
    >>> whole = together(parts)
    >>> whole.stats.mean, round(whole.stats.std, 6), whole.count, whole.nan
    (2.0, 0.816497, 3, 1)
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

__all__ = ["ChannelStats", "Moments", "moments", "together"]


@dataclass(frozen=True)
class ChannelStats:
    """Mean, standard deviation and range of one channel (or feature) over the finite values."""

    mean: float
    std: float
    low: float
    high: float


#: Values widened to float64 at a time (2 MiB): the statistics of a batch of any size never copy it whole.
_BLOCK = 1 << 18


def _blocks(array: np.ndarray) -> Iterator[np.ndarray]:
    """Views of *array* holding at most :data:`_BLOCK` values each (whole rows when they fit), covering it once."""
    if array.size <= _BLOCK or array.ndim == 0:
        yield array
    elif array.ndim == 1:
        for start in range(0, len(array), _BLOCK):
            yield array[start : start + _BLOCK]
    elif array[0].size <= _BLOCK:
        step = _BLOCK // array[0].size
        for start in range(0, len(array), step):
            yield array[start : start + step]
    else:
        for row in array:
            yield from _blocks(row)


def _finite(block: np.ndarray) -> tuple[np.ndarray, int, int]:
    """The finite values of *block*, as a flat float64 array (a copy of the block only); its NaN and Inf counts."""
    values = block.astype(np.float64).reshape(-1)
    finite = np.isfinite(values)
    if finite.all():
        return values, 0, 0
    nan = int(np.count_nonzero(np.isnan(values)))
    return values[finite], nan, values.size - int(np.count_nonzero(finite)) - nan


@dataclass(frozen=True)
class Moments:
    """What one part of a batch contributes to statistics of it and of the parts together."""

    stats: ChannelStats
    count: int  # finite values
    sums: tuple[float, ...]  # partial sums of the finite values (their mean is math.fsum(sums) / count)
    squares: float  # the sum of squared deviations from the part's own mean
    whole: bool
    nan: int
    inf: int


def moments(array: np.ndarray, whole: bool = False) -> Moments:
    """Mean, standard deviation and range of the finite values of *array*, and what :func:`together` needs.

    Whole numbers are looked for only when *whole* is true (else the answer is ``False``).

    Two passes over float64 blocks of it (:func:`_blocks`): the mean, then the squared
    deviations from it, each block summed pairwise and the blocks' sums with
    :func:`math.fsum`; the same numbers as NumPy's ``mean()`` and ``std()`` of a float64
    copy (to a few units in the last place) without that copy. A channel whose values are
    all equal has exactly that mean and a standard deviation of 0.
    """
    sums, count, low, high, nan, inf = [], 0, math.inf, -math.inf, 0, 0
    for block in _blocks(array):
        kept, block_nan, block_inf = _finite(block)
        nan, inf = nan + block_nan, inf + block_inf
        if not kept.size:
            continue
        sums.append(float(kept.sum()))
        count += kept.size
        low, high = min(low, float(kept.min())), max(high, float(kept.max()))
        whole = whole and bool((kept == np.round(kept)).all())  # stays False when not asked
    if not count:
        nothing = ChannelStats(float("nan"), float("nan"), float("nan"), float("nan"))
        return Moments(nothing, 0, (), 0.0, False, nan, inf)
    if low == high:
        return Moments(ChannelStats(low, 0.0, low, high), count, tuple(sums), 0.0, whole, nan, inf)
    mean = math.fsum(sums) / count
    squares = []
    for block in _blocks(array):
        deviations = _finite(block)[0]
        deviations -= mean
        squares.append(float(np.square(deviations, out=deviations).sum()))
    spread = math.fsum(squares)
    return Moments(
        ChannelStats(mean, math.sqrt(spread / count), low, high), count, tuple(sums), spread, whole, nan, inf
    )


def together(parts: list[Moments]) -> Moments:
    """The moments of the parts' values taken together, without another pass over them.

    The sum of squared deviations from the overall mean is each part's own plus its count
    times the square of its mean's distance from the overall one (Chan et al.'s pairwise
    update); the mean is the exact sum of every part's partial sums.
    """
    kept = [part for part in parts if part.count]
    nan, inf = sum(part.nan for part in parts), sum(part.inf for part in parts)
    whole = all(part.whole for part in kept)
    if not kept:
        nothing = ChannelStats(float("nan"), float("nan"), float("nan"), float("nan"))
        return Moments(nothing, 0, (), 0.0, False, nan, inf)
    count = sum(part.count for part in kept)
    sums = tuple(value for part in kept for value in part.sums)
    low, high = min(part.stats.low for part in kept), max(part.stats.high for part in kept)
    if low == high:
        return Moments(ChannelStats(low, 0.0, low, high), count, sums, 0.0, whole, nan, inf)
    mean = math.fsum(sums) / count
    spread = math.fsum(part.squares + part.count * (part.stats.mean - mean) ** 2 for part in kept)
    return Moments(
        ChannelStats(mean, math.sqrt(spread / count), low, high), count, sums, spread, whole, nan, inf
    )

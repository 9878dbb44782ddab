"""Statistics of input values and labels, on plain NumPy arrays: written once, for every data check.

The data-pipeline checks (GA0xx) measure sampled batches with these; the checks of inputs
given to ``audit()`` itself use the same functions, so a batch is judged alike wherever it
comes from. Nothing here knows about pipelines or networks; what is wrong with a column's scale is
told as the facts of a finding's cause (:class:`~graphaudit.findings.Cause`), which the checks nest
in their own.

- :func:`column_stats`: mean, standard deviation, range per channel (the channel axis is
  found by :func:`channel_axis`), NaN / Inf counts;
- :func:`scale_problems`: raw 0-255 values, a channel far from zero mean / unit scale, and
  channels whose scales differ by :data:`SCALE_RATIO` or more (:class:`RawPixelValues`,
  :class:`FarFromUnitScale`, :class:`ChannelScalesApart`);
- :func:`robust_z`: the modified z-score (median absolute deviation) of Iglewicz & Hoaglin;
- :func:`label_format`: class indices, one-hot rows, probabilities or continuous targets;
- :func:`row_hash`: a content hash of one sample.

Example:
    >>> import numpy as np
    >>> raw = np.random.default_rng(0).integers(0, 256, (8, 3, 16, 16)).astype(np.uint8)
    >>> stats = column_stats(raw)
    >>> stats.axis, len(stats.channels), [p.message().split(":")[0] for p in scale_problems(stats)]
    (1, 3, ['raw 0-255 values'])
    >>> scale_problems(column_stats((raw / 127.5 - 1).astype(np.float32)))
    []
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from graphaudit.checks._shared.moments import ChannelStats, moments, together
from graphaudit.findings import Facts
from graphaudit.text import listing

__all__ = [
    "MAX_MEAN",
    "MAX_STD",
    "MIN_STD",
    "SCALE_RATIO",
    "ChannelScalesApart",
    "ChannelStats",
    "ColumnStats",
    "FarFromUnitScale",
    "LabelFormat",
    "RawPixelValues",
    "ScaleProblem",
    "channel_axis",
    "column_stats",
    "label_format",
    "robust_z",
    "row_hash",
    "scale_problems",
]

#: A channel whose mean lies beyond ±MAX_MEAN is far from zero mean (the article: inputs "between -1 and 1").
MAX_MEAN = 3.0
#: A standard deviation above MAX_STD (or below MIN_STD, values squashed towards 0) is far from unit scale.
MAX_STD = 10.0
MIN_STD = 1e-2
#: Channels whose standard deviations differ by this factor differ by two orders of magnitude.
SCALE_RATIO = 100.0
_CHANNELS = (1, 2, 3, 4)


@dataclass(frozen=True)
class ColumnStats:
    """The statistics of one column: per channel, and for the whole column."""

    dtype: str
    row_shape: tuple[int, ...]
    axis: int | None
    channels: tuple[ChannelStats, ...]
    overall: ChannelStats
    count: int
    nan: int
    inf: int
    integral: bool

    def describe(self) -> str:
        """The statistics in words (the first channels only)."""
        o = self.overall
        text = f"{self.dtype}, range [{o.low:.4g}, {o.high:.4g}], mean {o.mean:.4g}, std {o.std:.4g}"
        if self.axis is not None and len(self.channels) > 1:
            parts = listing(f"{c.mean:.3g}±{c.std:.3g}" for c in self.channels)
            unit = "feature" if len(self.row_shape) == 1 else f"channel (axis {self.axis})"
            text += f"; per {unit} mean±std {parts}"
        return text


def channel_axis(shape: tuple[int, ...]) -> int | None:
    """The axis of a batch that holds channels or features, ``None`` for one value per row.

    ``(N, C, H, W)`` with a small C gives 1, ``(N, H, W, C)`` 3, ``(N, F)`` 1 (features),
    ``(N, L, F)`` 2; ``(N,)`` and ``(N, H, W)`` (one grey channel) give ``None``.

    Example:
        >>> channel_axis((8, 3, 32, 32)), channel_axis((8, 32, 32, 3)), channel_axis((8, 5)), channel_axis((8,))
        (1, 3, 1, None)
    """
    if len(shape) <= 1:
        return None
    if len(shape) == 2:
        return 1 if shape[1] > 1 else None
    if len(shape) == 4:
        if shape[1] in _CHANNELS and shape[3] not in _CHANNELS:
            return 1
        if shape[3] in _CHANNELS:
            return 3
        return 1
    if len(shape) == 3:
        return 2 if shape[2] in _CHANNELS or (shape[1] > 8 and shape[2] <= 64) else None
    return 1


def column_stats(batch: np.ndarray, axis: int | None = -1) -> ColumnStats:
    """The statistics of a batch (rows along axis 0); *axis* ``-1`` finds the channel axis itself.

    Computed block by block (:func:`~graphaudit.checks._shared.moments.moments`): never a
    float64 copy of the whole batch, so a 32x3x224x224 float32 batch (18 MiB) needs a few MiB
    more, not six times its size. With a channel axis, the statistics of the whole batch are
    put together from the channels' (:func:`~graphaudit.checks._shared.moments.together`): two
    passes over the values in all, not four and a count of NaN.
    """
    array = np.asarray(batch)
    if axis == -1:
        axis = channel_axis(array.shape)
    if array.dtype.kind not in "biuf":
        nothing = ChannelStats(float("nan"), float("nan"), float("nan"), float("nan"))
        return ColumnStats(
            str(array.dtype), tuple(int(d) for d in array.shape[1:]), axis, (), nothing, 0, 0, 0, False
        )
    whole = array.dtype.kind == "f"
    channels: tuple[ChannelStats, ...] = ()
    if axis is not None and array.ndim > axis and array.shape[axis] > 0:
        index: list[Any] = [slice(None)] * array.ndim
        parts = []
        for channel in range(array.shape[axis]):
            index[axis] = channel
            parts.append(moments(array[tuple(index)], whole))
        channels = tuple(part.stats for part in parts)
        overall = together(parts)
    else:
        overall = moments(array, whole)
    integral = bool(overall.count) and (array.dtype.kind in "biu" or overall.whole)
    return ColumnStats(
        str(array.dtype),
        tuple(int(d) for d in array.shape[1:]),
        axis,
        channels,
        overall.stats,
        int(array.size),
        overall.nan,
        overall.inf,
        integral,
    )


def _unit(stats: ColumnStats) -> str:
    """What one entry of the channel axis is called: a feature of ``(N, F)`` rows, else a channel."""
    return "feature" if len(stats.row_shape) == 1 else f"channel (axis {stats.axis})"


@dataclass(frozen=True)
class RawPixelValues(Facts):
    """Raw 0-255 pixel values: integers from 0 up to at least 32 and at most 255 (a part of a scale cause)."""

    dtype: str
    low: float
    high: float
    mean: float

    def message(self) -> str:
        return f"raw 0-255 values: {self.dtype} from {self.low:.4g} to {self.high:.4g} (mean {self.mean:.4g})"


@dataclass(frozen=True)
class FarFromUnitScale(Facts):
    """A channel (or the values) far from zero mean and unit scale (a part of a scale cause)."""

    unit: str  # what one entry of the channel axis is: "feature" or "channel (axis 1)"; "" for the values
    index: int | None  # the channel's index, None for the values as a whole
    mean: float
    std: float

    def message(self) -> str:
        where = f"{self.unit} {self.index}" if self.index is not None else "the values"
        return f"far from zero mean and unit scale: {where} has mean {self.mean:.4g}, std {self.std:.4g}"


@dataclass(frozen=True)
class ChannelScalesApart(Facts):
    """Two channels whose standard deviations differ by :data:`SCALE_RATIO` or more (a part of a scale cause)."""

    unit: str  # what one entry of the channel axis is: "feature" or "channel (axis 1)"
    large: int  # the channel of the largest standard deviation
    large_std: float
    small: int  # the channel of the smallest
    small_std: float

    def message(self) -> str:
        return (
            f"scales differ by {self.large_std / self.small_std:.0f}x: {self.unit} {self.large} has std "
            f"{self.large_std:.4g}, {self.unit} {self.small} has std {self.small_std:.4g}"
        )


ScaleProblem = RawPixelValues | FarFromUnitScale | ChannelScalesApart


def scale_problems(stats: ColumnStats) -> list[ScaleProblem]:
    """What is far from zero mean and unit scale in *stats*, as facts (``message()``: ``"what: numbers"``).

    Empty when fine. Reported: raw pixel values (integers reaching above 1.5, none below 0,
    none above 255, with a maximum of at least 32); a channel whose mean is beyond
    ±:data:`MAX_MEAN` or whose standard deviation is above :data:`MAX_STD` or below
    :data:`MIN_STD`; channels whose standard deviations differ by :data:`SCALE_RATIO` or more.
    """
    o = stats.overall
    if not stats.count or not np.isfinite(o.std) or o.std == 0:
        return []
    found: list[ScaleProblem] = []
    if stats.integral and o.low >= 0 and 32 <= o.high <= 255:
        found.append(RawPixelValues(stats.dtype, float(o.low), float(o.high), float(o.mean)))
    channels = [c for c in stats.channels if np.isfinite(c.std)] or [o]
    far = [
        (i, c)
        for i, c in enumerate(channels)
        if abs(c.mean) > MAX_MEAN or c.std > MAX_STD or 0 < c.std < MIN_STD
    ]
    if far and not found:
        i, c = far[0]
        one = stats.axis is not None and len(channels) > 1
        found.append(
            FarFromUnitScale(_unit(stats) if one else "", i if one else None, float(c.mean), float(c.std))
        )
    spread = [(c.std, i) for i, c in enumerate(channels) if c.std > 0]
    if len(spread) > 1:
        (small, i), (big, j) = min(spread), max(spread)
        if big / small >= SCALE_RATIO:
            found.append(ChannelScalesApart(_unit(stats), j, float(big), i, float(small)))
    return found


def robust_z(values: np.ndarray) -> np.ndarray | None:
    """The modified z-score ``0.6745 (x - median) / MAD`` of each value (Iglewicz & Hoaglin, 1993).

    When the median absolute deviation is 0 (more than half the values equal), the mean
    absolute deviation (times 1.2533) takes its place; ``None`` when both are 0.

    Example:
        >>> robust_z(np.array([1.0, 2.0, 3.0, 4.0, 100.0])).round(1).tolist()
        [-1.3, -0.7, 0.0, 0.7, 65.4]
    """
    x = np.asarray(values, dtype=np.float64)
    median = np.median(x)
    mad = np.median(np.abs(x - median))
    if mad > 0:
        return 0.6745 * (x - median) / mad
    mean_ad = np.mean(np.abs(x - median))
    return (x - median) / (1.253314 * mean_ad) if mean_ad > 0 else None


@dataclass(frozen=True)
class LabelFormat:
    """What a label column holds: ``kind`` is ``index``, ``one-hot``, ``probabilities``, ``multi-hot`` or ``continuous``."""

    kind: str
    width: int
    low: float
    high: float
    dtype: str


def label_format(labels: np.ndarray) -> LabelFormat:
    """The format of a batch of labels (rows along axis 0).

    Example:
        >>> label_format(np.array([0, 3, 1])).kind, label_format(np.eye(4)[[0, 2]]).kind
        ('index', 'one-hot')
        >>> label_format(np.array([[0.2, 0.8], [0.5, 0.5]])).kind, label_format(np.array([0.3, 1.7])).kind
        ('probabilities', 'continuous')
    """
    array = np.asarray(labels)
    values = array.astype(np.float64) if array.dtype.kind in "biuf" else np.zeros(0)
    low, high = (float(values.min()), float(values.max())) if values.size else (0.0, 0.0)
    rows = array.reshape(len(array), -1) if array.ndim else array.reshape(1, 1)
    width = int(rows.shape[1]) if rows.ndim == 2 else 1
    integral = values.size > 0 and bool((values == np.round(values)).all())
    if width == 1:
        kind = "index" if integral else "continuous"
    elif integral and low >= 0 and high <= 1:
        kind = "one-hot" if (rows.sum(axis=1) == 1).all() else "multi-hot"
    elif low >= 0 and high <= 1 and np.allclose(rows.sum(axis=1), 1, atol=1e-3):
        kind = "probabilities"
    else:
        kind = "continuous"
    return LabelFormat(kind, width, low, high, str(array.dtype))


def row_hash(*parts: np.ndarray) -> str:
    """A content hash of one sample (its arrays' bytes, shapes and dtypes).

    Example:
        >>> a = np.arange(4)
        >>> row_hash(a) == row_hash(a.copy()), row_hash(a) == row_hash(a.astype(np.int8))
        (True, False)
    """
    digest = hashlib.blake2b(digest_size=16)
    for part in parts:
        array = np.ascontiguousarray(part)
        digest.update(f"{array.dtype}{array.shape}".encode())
        digest.update(array.tobytes())
    return digest.hexdigest()

"""GA050's statistics of a batch given to audit() (``column_stats``) without float64 copies of the whole batch.

``column_stats`` made a float64 copy of the batch, a second one per channel layout, a third
of its finite values, and NumPy's ``std`` more temporaries of each: a 32x3x224x224 float32
batch (18.4 MiB) peaked at ~160 MiB. It now widens blocks of 2 MiB at a time; the numbers are
the same as the float64 copies gave (to a few units in the last place), so every finding is.
"""

from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

from graphaudit.checks._shared.data_stats import ChannelStats, ColumnStats, column_stats, scale_problems


def whole_batch_stats(batch: np.ndarray) -> ColumnStats:
    """The statistics as column_stats computed them before: on a float64 copy of the whole batch."""
    stats = column_stats(batch)  # for the axis, dtype and shape only
    values = batch.astype(np.float64)
    finite = np.isfinite(values)

    def one(x: np.ndarray) -> ChannelStats:
        if not x.size:
            return ChannelStats(float("nan"), float("nan"), float("nan"), float("nan"))
        return ChannelStats(float(x.mean()), float(x.std()), float(x.min()), float(x.max()))

    channels: tuple[ChannelStats, ...] = ()
    if stats.axis is not None:
        moved = np.moveaxis(values, stats.axis, 0).reshape(values.shape[stats.axis], -1)
        mask = np.moveaxis(finite, stats.axis, 0).reshape(values.shape[stats.axis], -1)
        channels = tuple(one(row[ok]) for row, ok in zip(moved, mask))
    kept = values[finite]
    integral = bool(kept.size) and (batch.dtype.kind in "biu" or bool((kept == np.round(kept)).all()))
    return ColumnStats(
        stats.dtype,
        stats.row_shape,
        stats.axis,
        channels,
        one(kept),
        int(values.size),
        int(np.isnan(values).sum()),
        int(np.isinf(values).sum()),
        integral,
    )


def batches() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, (8, 3, 16, 16))
    features = rng.standard_normal((64, 5)) * np.array([1.0, 1e3, 0.001, 50.0, 1.0]) + np.array(
        [0, 0, 0, 400, 5]
    )
    holes = rng.standard_normal((4, 3, 300, 300)).astype(np.float32)  # more than one block per channel
    holes[0, 1, :5, :7] = np.nan
    holes[2, 2, 9, 9] = np.inf
    holes[3, 0, 1, :] = -np.inf
    return {
        "normal NCHW float32 (blocks)": rng.standard_normal((6, 3, 224, 224)).astype(np.float32) * 0.5 + 0.1,
        "raw 0-255 as float32": raw.astype(np.float32),
        "raw uint8 NHWC": raw.transpose(0, 2, 3, 1).astype(np.uint8),
        "features 100x apart (N, F)": features,
        "float16 in [0, 1]": rng.random((8, 3, 32, 32)).astype(np.float16),
        "non-finite values": holes,
        "a channel of NaN only": np.concatenate([np.full((4, 1, 8, 8), np.nan), np.ones((4, 2, 8, 8))], 1),
        "int64 token ids (N, L)": rng.integers(0, 30000, (4, 2048)),
        "one value per row": rng.standard_normal(100).astype(np.float32) * 20,
        "a constant channel of integers": np.concatenate(
            [np.zeros((4, 1, 8, 8)), rng.random((4, 2, 8, 8))], 1
        ),
        "booleans": rng.random((8, 3, 8, 8)) > 0.5,
    }


@pytest.mark.parametrize("name", sorted(batches()))
def test_the_statistics_are_those_of_a_float64_copy(name):
    batch = batches()[name]
    before = batch.copy()
    new, old = column_stats(batch), whole_batch_stats(batch)
    assert np.array_equal(batch, before, equal_nan=batch.dtype.kind == "f")  # the batch is left as it was
    same = ("dtype", "row_shape", "axis", "count", "nan", "inf", "integral")
    assert [getattr(new, f) for f in same] == [getattr(old, f) for f in same]
    assert len(new.channels) == len(old.channels)
    for mine, theirs in zip((new.overall, *new.channels), (old.overall, *old.channels)):
        np.testing.assert_allclose(
            [mine.mean, mine.std, mine.low, mine.high],
            [theirs.mean, theirs.std, theirs.low, theirs.high],
            rtol=1e-12,
            atol=1e-15,
        )
        assert (mine.low, mine.high) == (theirs.low, theirs.high) or np.isnan(mine.low)
    said = lambda stats: [p.message() for p in scale_problems(stats)]  # noqa: E731
    assert said(new) == said(old) and new.describe() == old.describe()


def test_a_constant_channel_has_exactly_its_value_and_no_spread():
    batch = np.concatenate([np.full((4, 1, 8, 8), 0.1, np.float32), np.ones((4, 2, 8, 8), np.float32)], 1)
    stats = column_stats(batch)
    assert stats.channels[0] == ChannelStats(
        float(np.float32(0.1)), 0.0, float(np.float32(0.1)), float(np.float32(0.1))
    )


def test_a_224_batch_of_32_images_is_measured_without_copying_it_whole():
    """tracemalloc's peak while the statistics are computed: under twice the batch's bytes (it was ~8.7x)."""
    batch = np.random.default_rng(0).standard_normal((32, 3, 224, 224), dtype=np.float32)
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        stats = column_stats(batch)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert len(stats.channels) == 3 and stats.count == batch.size
    assert peak < 2 * batch.nbytes, (
        f"peak {peak / 2**20:.1f} MiB for a batch of {batch.nbytes / 2**20:.1f} MiB"
    )

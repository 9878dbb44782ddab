"""What the watch keeps of a large network: tracked positions, estimated norms, exact no-change.

Above :data:`~graphaudit.watch.record.WHOLE_BYTES` of weights the recorder no longer copies
the weights before each sampled update nor sums whole gradients: each large parameter is
tracked at :data:`~graphaudit.watch.record.TRACKED` fixed positions. These tests drive a
:class:`~graphaudit.watch.record.Recorder` by hand, with updates whose norms are known.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Parameter, Tensor

from graphaudit.watch import record as record_module
from graphaudit.watch.record import NOISE_WINDOW, TRACKED, WHOLE_BYTES, Recorder

RNG = np.random.default_rng(0)
BIG = (2048, WHOLE_BYTES // (4 * 2048) + 64)  # one parameter just over the whole-copy budget


def parameters() -> list[Parameter]:
    big = Parameter(Tensor(RNG.standard_normal(BIG).astype(np.float32)), name="big")
    small = Parameter(Tensor(RNG.standard_normal((4, 4)).astype(np.float32)), name="small")
    return [big, small]


def step(recorder: Recorder, number: int, change) -> list[float | None]:
    recorder.before(number)
    change()
    recorder.after(number, 1, 0.5)
    return recorder.record.samples[-1].update_norms


def add(param: Parameter, delta: np.ndarray) -> None:
    param.set_data(Tensor(param.asnumpy() + delta.astype(np.float32)))


def test_a_dense_update_of_a_tracked_parameter_is_estimated_and_no_change_is_exact():
    big, _ = params = parameters()
    recorder = Recorder(params, every=1)
    delta = RNG.standard_normal(BIG) * 1e-3
    start = big.asnumpy().copy()
    estimated, untouched = step(recorder, 1, lambda: add(big, delta))
    exact = float(np.linalg.norm(big.asnumpy() - start))
    assert estimated == pytest.approx(exact, rel=0.02)
    assert untouched == 0.0  # small: kept whole, exact
    assert step(recorder, 2, lambda: None)[0] == 0.0  # tracked and unchanged: exactly 0 (GA960 reads it)


def test_a_sparse_update_the_tracked_positions_miss_is_unknown_not_zero():
    big, _ = params = parameters()
    recorder = Recorder(params, every=1)
    tracked = set(recorder._tracked[0].tolist())
    missed = [i for i in range(1000) if i not in tracked][:5]
    delta = np.zeros(BIG, np.float32)
    delta.reshape(-1)[missed] = 1.0  # a few values updated, none of them tracked
    assert step(recorder, 1, lambda: add(big, delta))[0] is None


def test_what_is_kept_of_a_large_network_is_a_few_mib():
    big, _ = params = parameters()
    recorder = Recorder(params, every=1)
    recorder.before(1)
    kept = sum(b.nbytes for b in recorder._before)
    assert kept <= (TRACKED + 16) * 4 < big.asnumpy().nbytes // 60
    grads = [Tensor(RNG.standard_normal(BIG).astype(np.float32)), Tensor(np.ones((4, 4), np.float32))]
    recorder.after(1, 1, 0.5, grads)
    assert sum(w.nbytes for w in recorder._window) <= (TRACKED + 16) * 4


def test_what_a_sampled_step_keeps_does_not_grow_with_python_objects():
    """Each sample keeps POSITIONS values of each weight as one array, not Python floats.

    As lists, 256 floats a weight were ~0.5 MB a sampled step on resnet18's 62 weights: the
    watch's memory grew by ~100 MiB over 200 steps of ``Watch(every=1)``.
    """
    import tracemalloc

    params = [
        Parameter(Tensor(RNG.standard_normal((64, 64)).astype(np.float32)), name=f"w{i}") for i in range(20)
    ]
    recorder = Recorder(params, every=1)
    step(recorder, 1, lambda: None)  # first sample: the recorder's lazily made state
    tracemalloc.start()
    try:
        start = tracemalloc.get_traced_memory()[0]
        for number in range(2, 12):
            step(recorder, number, lambda: None)
        per_sample = (tracemalloc.get_traced_memory()[0] - start) / 10
    finally:
        tracemalloc.stop()
    values = record_module.POSITIONS * len(params)
    assert per_sample < values * 4 + 8_000, f"{per_sample:.0f} bytes a sample for {values} values"


def test_the_noise_scale_sums_of_tracked_gradients_match_the_whole_ones(monkeypatch):
    params = parameters()
    grads = [
        [Tensor((RNG.standard_normal(BIG) + 0.5).astype(np.float32)), Tensor(np.ones((4, 4), np.float32))]
        for _ in range(NOISE_WINDOW)
    ]

    def windows() -> tuple[float, float]:
        recorder = Recorder(params, every=1)
        for number, grad in enumerate(grads, 1):
            recorder.before(number)
            recorder.after(number, 1, 0.5, grad)
        ((_, small, big),) = recorder.record.noise_windows
        return small, big

    tracked = windows()
    monkeypatch.setattr(record_module, "WHOLE_BYTES", 2**40)  # everything whole: the exact sums
    whole = windows()
    assert tracked[0] == whole[0]  # |g|^2 is read whole in both
    assert tracked[1] == pytest.approx(whole[1], rel=0.02)


def test_a_loss_that_rose_within_its_noise_is_not_called_flat():
    """The benchmark's resnet18 on random labels: the loss rose from 3.3 to 6.4, noisily; raising the rate is no fix."""
    from mindspore import nn

    import graphaudit
    from graphaudit.evidence.training import RunRecord

    rose = [
        3.28,
        2.1,
        2.93,
        5.29,
        3.96,
        5.82,
        3.08,
        4.98,
        3.82,
        7.04,
        4.05,
        7.45,
        9.54,
        7.76,
        3.73,
        6.37,
        6.03,
    ]
    rose += [6.94, 6.9, 3.85]
    flat = [2.30 + 0.2 * ((i * 7) % 5 - 2) / 2 for i in range(20)]
    verdicts = []
    for losses in (rose, flat):
        record = RunRecord(("w",), losses=list(losses), epochs=[1] * len(losses), finished=True)
        report = graphaudit.audit(nn.Dense(2, 2), watched=record, select=["GA952"], config=False)
        assert "GA952" in report.checks_run
        verdicts.append(bool(report.by_check("GA952")))
    assert verdicts == [False, True]

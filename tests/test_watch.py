"""The training watch: it changes nothing, its report is a Report, and it says what it could not watch.

Each run trains a real small network. "Changes nothing" is bit for bit: the same seeded run
with and without the watch ends with identical weights, BatchNorm statistics and optimizer
state, for ``Model.train`` (with BatchNorm and an ``eval_dataset``), a functional loop, and a
loss-scaled float16 loop, each run in a fresh process (``tests/watch_worker.py``, started by
``tests/twins.py``); each comparison first checks that two runs without the watch agree, so a
non-deterministic kernel cannot make the test pass or fail by chance.
"""

from __future__ import annotations

import json
import logging
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
import twins
from mindspore import nn

import graphaudit
from graphaudit.watch import WatchFailed, watchpoints

WORKER = twins.TESTS / "watch_worker.py"


def run(case: str, mode: str, folder: Path) -> tuple[dict[str, np.ndarray], dict]:
    out = folder / f"{case}-{mode}-{len(list(folder.iterdir()))}.npz"
    twins.finish(twins.start(WORKER, case, mode, out, cwd=folder))
    with np.load(out) as saved:
        found = {k: saved[k] for k in saved.files}
    summary = out.with_suffix(".json")
    return found, json.loads(summary.read_text()) if summary.exists() else {}


def assert_identical(a: dict[str, np.ndarray], b: dict[str, np.ndarray]) -> None:
    assert a.keys() == b.keys()
    differ = [k for k in a if a[k].tobytes() != b[k].tobytes()]
    assert not differ, f"not bit-identical: {differ}"


@pytest.mark.slow  # twelve fresh MindSpore processes
@pytest.mark.parametrize("case", ["model", "graph", "loop", "scaled"])
def test_a_watched_run_gives_bit_identical_weights(case, tmp_path):
    """Model.train (BatchNorm, eval_dataset) in PyNative and, with a fixed loss scale, in GRAPH_MODE (its
    gradients tapped in the compiled step), a functional loop, a loss-scaled float16 loop."""
    baseline, _ = run(case, "plain", tmp_path)
    again, _ = run(case, "plain", tmp_path)
    assert_identical(baseline, again)  # the run itself is deterministic: the comparison means something
    watched, summary = run(case, "watched", tmp_path)
    assert_identical(baseline, watched)
    assert summary["report"] == "Report" and summary["steps"] == (32 if case in ("model", "graph") else 16)
    assert summary["gradients_seen"] and summary["samples"] >= 8
    assert summary["validation"] == (2 if case in ("model", "graph") else 0)
    assert summary["loss_scaled"] is (case == "scaled")


@pytest.fixture
def pynative():
    mode = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=mode)


def dataset(count: int = 256, batch: int = 16) -> ms.dataset.Dataset:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((count, 16)).astype(np.float32)
    y = (x @ np.random.default_rng(1).standard_normal((16, 4))).argmax(1).astype(np.int32)
    return ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch)


def test_graph_mode_watches_the_gradients_of_the_compiled_step(pynative):
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 4)])
    model = ms.train.Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.1))
    watch = graphaudit.Watch(every=1, fail_on="never")
    model.train(1, dataset(64), callbacks=[watch], dataset_sink_mode=False)
    assert {"GA950", "GA958", "GA959"} <= set(watch.report.checks_run), watch.report.skipped
    assert "w.step(grads=...)" in watch.report.skipped["GA955"]  # the way to watch the noise scale is said
    assert "GA953" in watch.report.skipped and "valid_dataset" in watch.report.skipped["GA953"]


def test_a_nan_loss_stops_model_train_at_once_and_is_said(caplog, pynative):
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])
    model = ms.train.Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 30.0))
    seen = []
    watch = graphaudit.Watch(every=5, on_finding=seen.append)
    with caplog.at_level(logging.WARNING, logger="graphaudit"), pytest.raises(WatchFailed) as stopped:
        model.train(20, dataset(256), callbacks=[watch], dataset_sink_mode=False)
    assert stopped.value.finding.check_id == "GA950"
    assert watch.record.steps == watch.record.non_finite.step < 20 * 16  # stopped at the NaN's step
    assert "GA950" in caplog.text and any(f.check_id == "GA950" for f in seen)


def test_the_watchpoints_are_their_own_family_and_can_be_chosen():
    assert [c.check_id for c in watchpoints(["loss-not-finite", "GA960"])] == ["GA950", "GA960"]
    assert {c.family for c in watchpoints()} == {"training watch (watchpoints on a real training run)"}
    with pytest.raises(graphaudit.GraphAuditError, match="did you mean 'loss-not-finite'"):
        graphaudit.Watch(checks=["loss-not-finit"])
    with pytest.raises(graphaudit.GraphAuditError, match="every="):
        graphaudit.Watch(every=0)


def test_audit_without_a_watched_run_lists_the_watchpoints_as_not_run():
    report = graphaudit.audit(nn.Dense(2, 2))
    assert "GA950" in report.skipped and "graphaudit.Watch()" in report.skipped["GA950"]


def test_a_jit_train_step_in_a_loop_has_its_gradients_watched(pynative):
    """Under @jit the loop hands the step's own gradients to w.step(): the gradient watchpoints run."""
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 4)])
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)

    @ms.jit
    def train_step(x, y):
        loss, grads = grad_fn(x, y)
        optimizer(grads)
        return loss, grads

    with graphaudit.watch(net, optimizer, every=1, fail_on="never", batch_size=16) as w:
        for x, y in dataset(256).create_tuple_iterator(num_epochs=1):
            loss, grads = train_step(x, y)
            w.step(loss=loss, grads=grads)
    assert {"GA958", "GA959"} <= set(w.report.checks_run), w.report.skipped
    assert w.record.gradients_seen and all(s.grad_norms and s.grad_norms[0] > 0 for s in w.record.samples)


def test_random_labels_are_noise_not_divergence(pynative):
    """Labels the inputs do not predict: the loss hovers at log(10) with its batch noise; GA951 is silent."""
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 10)])
    optimizer = nn.SGD(net.trainable_params(), 0.5)  # large, yet nothing to learn: no divergence either
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 16)).astype(np.float32)
    y = rng.integers(0, 10, 2048).astype(np.int32)
    with graphaudit.watch(net, optimizer, every=10, fail_on="never", checks=["GA951"]) as w:
        for start in range(0, 2048, 16):
            loss, grads = grad_fn(ms.Tensor(x[start : start + 16]), ms.Tensor(y[start : start + 16]))
            optimizer(grads)
            w.step(loss=loss, grads=grads)
    losses = np.array(w.record.losses)
    assert abs(np.median(losses[-25:]) - np.log(10)) < 0.1  # at chance: the run learned nothing
    assert np.ptp(losses) > 0.3  # and its loss is noisy, the case a naive rule mistakes for a rise
    assert "GA951" in w.report.checks_run and not w.report.by_check("GA951"), w.report


def _softplus_loop(every: int, give_inputs: bool) -> tuple[object, list[np.ndarray]]:
    """10 steps of a loop whose hand-written softplus overflows on the outlier sixth batch (samples/GA950)."""
    from mindspore import ops

    class NaiveSoftplus(nn.Cell):
        def construct(self, x):
            return ops.log(1 + ops.exp(x))

    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(8, 16), NaiveSoftplus(), nn.Dense(16, 4)])
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    loss_fn = nn.CrossEntropyLoss()

    def forward(x, y):
        return loss_fn(net(x), y)

    grad_fn = ms.value_and_grad(forward, None, optimizer.parameters)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((80, 8)).astype(np.float32)
    y = x[:, :4].argmax(1).astype(np.int32)
    x[40:48] *= 100.0
    with graphaudit.watch(net, optimizer, every=every, fail_on="never", checks=["GA950"]) as w:
        for start in range(0, 80, 8):
            batch = ms.Tensor(x[start : start + 8])
            loss, grads = grad_fn(batch, ms.Tensor(y[start : start + 8]))
            optimizer(grads)
            w.step(loss=loss, grads=grads, inputs=(batch,) if give_inputs else None)
    return w, [p.asnumpy().copy() for p in net.get_parameters()]


def test_ga950_names_the_layer_whose_output_overflowed_and_changes_nothing(pynative):
    w, weights = _softplus_loop(every=1, give_inputs=True)
    bad = w.record.non_finite
    # the softplus (cell "1"), not the Dense before it
    assert (bad.step, bad.forward) == (6, "1") and "Inf" in bad.tensor
    assert "layer whose output was not finite was 1" in w.report.by_check("GA950")[0].message
    _, unwatched = _softplus_loop(every=1, give_inputs=False)
    same = [a.tobytes() == b.tobytes() for a, b in zip(weights, unwatched)]
    assert all(same)  # the re-run wrote nothing back
    # not sampled, and the update already made every weight NaN: re-run with the last whole copy
    # (the weights step 5 saw, copied after step 4), said as such, not guessed from the NaN weights
    w, _ = _softplus_loop(every=4, give_inputs=True)
    bad = w.record.non_finite
    assert (
        bad.forward == "1" and "the weights step 5 saw, the last copied (1 steps earlier" in bad.forward_note
    )


@pytest.mark.parametrize(
    ("which", "seen", "fix"),
    [
        ("bad", "stayed at 2**24 for all 20 steps", "Use a dynamic scale"),
        ("also_warning", "fell from 2**23 to 2**17", "init_loss_scale=2**17"),
    ],
)
def test_ga961_says_which_loss_scale_to_change_from_the_scales_the_run_used(which, seen, fix, pynative):
    """A fixed scale of 2**24 -> use a dynamic one; a dynamic one that started at 2**24 -> start lower."""
    from sample_audits import audited

    (finding,) = [f for f in audited("GA961", which).report.findings if f.check_id == "GA961"]
    assert seen in finding.message and fix in finding.fix
    assert "Use a dynamic" not in finding.fix or which == "bad"  # never told to use what it uses


def test_ga961_reads_the_loss_scale_of_model_trains_loss_scaled_step(pynative):
    """Model.train of a loss-scaled step (a fixed 2**24) on a float16 network: its (loss, overflow, scale)."""
    from mindspore.amp import all_finite

    class ScaledStep(nn.Cell):  # TrainOneStepWithLossScaleCell's outputs; it has no overflow check on CPU
        def __init__(self, with_loss: nn.Cell, optimizer: nn.Optimizer, scale: float) -> None:
            super().__init__()
            self.with_loss, self.optimizer, self.scale = with_loss, optimizer, ms.Tensor(scale, ms.float32)
            self.grad = ms.ops.GradOperation(get_by_list=True, sens_param=True)

        def construct(self, x, y):
            loss = self.with_loss(x, y)
            grads = self.grad(self.with_loss, self.optimizer.parameters)(x, y, self.scale.astype(loss.dtype))
            grads = tuple(g / self.scale.astype(g.dtype) for g in grads)
            finite = all_finite(grads)
            if finite:
                self.optimizer(grads)
            return loss, ms.ops.logical_not(finite), self.scale

    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)]).to_float(ms.float16)
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    model = ms.train.Model(ScaledStep(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, 2.0**24))
    watch = graphaudit.Watch(every=5, fail_on="never")
    model.train(2, dataset(256), callbacks=[watch], dataset_sink_mode=False)
    assert watch.record.loss_scales == [2.0**24] * 32
    (finding,) = [f for f in watch.report.findings if f.check_id == "GA961"]
    assert "stayed at 2**24" in finding.message and "Use a dynamic scale" in finding.fix


def test_ga961_without_the_loss_scale_hedges_its_fix(pynative):
    """A loop that passes overflow= but not loss_scale=: the fix covers a fixed and a dynamic scale."""
    from graphaudit.checks.ga961_loss_scale_overflow_rate import _cause

    cause = _cause((True,) * 20, (None,) * 20)
    assert cause.scales == "unknown" and cause.message().endswith("most updates were skipped.")
    assert cause.fix() == (
        "If the scale is fixed, use a dynamic one (DynamicLossScaleManager or mindspore.amp.DynamicLossScaler); "
        "if it is dynamic already, start it lower; if it still overflows, keep the overflowing operations in "
        "float32 (amp_level='O1', or cast the loss to float32)."
    )

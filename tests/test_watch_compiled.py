"""The gradient watchpoints on compiled training steps (GRAPH_MODE ``Model.train``, ``@jit`` loops).

The same bug gives the same finding however the step is run: the GA958 and GA959 samples'
networks trained with ``Model.train`` in PyNative (gradients read by a hook on the optimizer)
and in GRAPH_MODE (their norms handed out of the compiled step by graphaudit's tap) get the
same gradient findings, and their good twins none. Bit-identical weights under the tap:
``tests/test_watch.py`` (the ``graph`` case, fresh processes).
"""

from __future__ import annotations

import math
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn
from sample_audits import SAMPLES, load

import graphaudit
from graphaudit.watch.compiled import gradient_norms

GRADIENT_WATCHPOINTS = {"GA958", "GA959"}


@pytest.fixture
def mode_restored():
    mode = ms.get_context("mode")
    yield
    ms.set_context(mode=mode)


def sample_run(path: Path, mode: int, learning_rate: float | None = None) -> graphaudit.Watch:
    """The sample's network and data, trained 10 steps by Model.train in *mode* under a Watch."""
    sample = load(path, name=f"compiled_{path.parent.name}_{path.stem}")
    ms.set_context(mode=mode)
    ms.set_seed(0)
    net = sample.Net()
    params = net.trainable_params()
    optimizer = nn.SGD(params, learning_rate) if learning_rate else nn.Adam(params, learning_rate=0.002)
    x, y = sample.data(160)
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)
    watch = graphaudit.Watch(every=1, fail_on="never")
    ms.train.Model(net, nn.CrossEntropyLoss(), optimizer).train(
        1, data, callbacks=[watch], dataset_sink_mode=False
    )
    return watch


def gradient_findings(watch: graphaudit.Watch) -> set[tuple[str, str]]:
    return {(f.check_id, f.subject) for f in watch.report.findings if f.check_id in GRADIENT_WATCHPOINTS}


@pytest.mark.parametrize(
    ("sample", "learning_rate", "expected"),
    [
        ("GA958/bad.py", None, {("GA958", "fc.weight")}),
        ("GA958/good.py", None, set()),
        ("GA959/bad.py", 30.0, {("GA959", "(root)")}),
        ("GA959/good.py", None, set()),
    ],
)
def test_graph_mode_model_train_gets_the_gradient_findings_of_pynative(
    sample, learning_rate, expected, mode_restored
):
    found = {}
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        watch = sample_run(SAMPLES / sample, mode, learning_rate)
        assert set(watch.report.checks_run) >= GRADIENT_WATCHPOINTS, watch.report.skipped
        found[mode] = gradient_findings(watch)
    assert found[ms.GRAPH_MODE] == found[ms.PYNATIVE_MODE] == expected


def test_the_tap_renames_nothing_is_put_back_and_serves_a_later_watch(mode_restored):
    """The train network's parameters (what a checkpoint saves) stay the user's, the optimizer is put
    back, and watches after an unwatched run (its step compiled without the tap) and after a watched
    one (compiled with it) both see the gradients."""
    ms.set_context(mode=ms.GRAPH_MODE)
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 4)])
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 16)).astype(np.float32)
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": (x[:, 0] > 0).astype(np.int32)}, shuffle=False).batch(
        16
    )
    train_network = model._train_network

    def names() -> list[tuple[str, str]]:
        return [(path, p.name) for path, p in train_network.parameters_and_names()]

    before = names()
    seen = []

    class Look(ms.train.Callback):
        def on_train_step_end(self, run_context):
            seen.append((type(train_network.optimizer).__name__, [n for _, n in names()]))

    model.train(1, data, dataset_sink_mode=False)  # compiled unwatched first
    for _ in range(2):
        watch = graphaudit.Watch(every=2, fail_on="never")
        model.train(1, data, callbacks=[watch, Look()], dataset_sink_mode=False)
        assert watch.record.gradients_seen and len([s for s in watch.record.samples if s.grad_norms]) == 3
        assert train_network.optimizer is optimizer and names() == before
        assert "GA958" in watch.report.checks_run
        assert "noise scale needs the gradients themselves" in str(watch.report.skipped["GA955"])
    # the tap stood in for the optimizer on the sampled steps only (the others ran the unwatched
    # step's own graph), and no parameter name changed
    assert [kind for kind, _ in seen].count("GradientTap") == 2 * 3
    assert {kind for kind, _ in seen} == {"GradientTap", "Momentum"}
    assert all(n == [p for _, p in before] for _, n in seen)


def test_a_train_network_without_an_optimizer_cell_says_why(mode_restored):
    class OwnStep(nn.Cell):
        """A train step written by hand that keeps its optimizer under another name."""

        def __init__(self, network, optimizer):
            super().__init__(auto_prefix=False)
            self.network, self.update, self.weights = network, optimizer, optimizer.parameters
            self.grad = ms.ops.GradOperation(get_by_list=True)

        def construct(self, x, y):
            loss = self.network(x, y)
            return ms.ops.depend(loss, self.update(self.grad(self.network, self.weights)(x, y)))

    ms.set_context(mode=ms.GRAPH_MODE)
    net = nn.SequentialCell([nn.Dense(4, 2)])
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    step = OwnStep(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer)
    x = np.ones((8, 4), np.float32)
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": np.zeros(8, np.int32)}, shuffle=False).batch(4)
    watch = graphaudit.Watch(every=1, fail_on="never")
    ms.train.Model(step).train(1, data, callbacks=[watch], dataset_sink_mode=False)
    reason = str(watch.report.skipped["GA958"])
    assert "GRAPH_MODE" in reason and "OwnStep" in reason and "'optimizer' cell" in reason


def test_a_jit_loop_hands_out_gradient_norms(mode_restored):
    """A @jit step that returns gradient_norms(grads) beside its loss: the gradient watchpoints run on
    them, the same norms as the gradients give; the noise scale says why it needs the gradients."""
    ms.set_context(mode=ms.PYNATIVE_MODE)
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
        return loss, gradient_norms(grads), grads

    rng = np.random.default_rng(0)
    x = rng.standard_normal((96, 16)).astype(np.float32)
    y = (x[:, 0] > 0).astype(np.int32)
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", batch_size=16) as w:
        for start in range(0, 96, 16):
            loss, norms, grads = train_step(
                ms.Tensor(x[start : start + 16]), ms.Tensor(y[start : start + 16])
            )
            expected = [float(np.linalg.norm(g.asnumpy())) for g in grads]
            w.step(loss=loss, grad_norms=norms)
            assert np.allclose(w.record.samples[-1].grad_norms, expected, rtol=1e-5)
    assert set(w.report.checks_run) >= GRADIENT_WATCHPOINTS
    assert "pass w.step(grads=...)" in str(w.report.skipped["GA955"])
    wrong = "holds 2 norms for the optimizer's 4 parameters"
    with (
        graphaudit.watch(net, optimizer, fail_on="never") as w,
        pytest.raises(graphaudit.GraphAuditError, match=wrong),
    ):
        w.step(loss=loss, grad_norms=norms[:, :2])


def test_gradient_norms_say_which_gradient_was_not_finite():
    readings = gradient_norms((ms.Tensor(np.array([3.0, 4.0], np.float32)), ms.Tensor([np.nan], ms.float32)))
    assert readings.shape == (2, 2) and readings.asnumpy()[1].tolist() == [1.0, 0.0]


def test_gradients_scaled_for_a_fixed_loss_scale_are_read_unscaled(mode_restored):
    """TrainOneStepCell(sens=1024) hands the optimizer (loss_scale=1024) gradients 1024 times too large:
    the watch reads the true ones, the same norms as the unscaled run's."""
    ms.set_context(mode=ms.GRAPH_MODE)
    first = {}
    for scale in (1.0, 1024.0):
        ms.set_seed(0)
        net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 4)])
        optimizer = nn.SGD(net.trainable_params(), 0.1, loss_scale=scale)
        manager = ms.amp.FixedLossScaleManager(scale, drop_overflow_update=False)
        model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer, loss_scale_manager=manager)
        x = np.random.default_rng(0).standard_normal((32, 16)).astype(np.float32)
        data = ms.dataset.NumpySlicesDataset({"x": x, "y": (x[:, 0] > 0).astype(np.int32)}, shuffle=False)
        watch = graphaudit.Watch(every=1, fail_on="never")
        model.train(1, data.batch(16), callbacks=[watch], dataset_sink_mode=False)
        first[scale] = watch.record.samples[0].grad_norms
    assert np.allclose(first[1024.0], first[1.0], rtol=1e-6), first


class LogOfInput(nn.Cell):
    """log(|x| · scale): a batch holding a zero row makes -inf there, whatever the weights."""

    def __init__(self) -> None:
        super().__init__()
        self.scale = nn.Dense(8, 8)
        self.head = nn.Dense(8, 3)

    def construct(self, x):
        return self.head(ms.ops.log(ms.ops.abs(x)) + self.scale(x))


@pytest.mark.parametrize("mode", [ms.PYNATIVE_MODE, ms.GRAPH_MODE], ids=["pynative", "graph"])
@pytest.mark.parametrize(
    ("row", "step", "graph_note"), [(70, 5, "its forward pass saw"), (100, 7, "step 5 saw")]
)
def test_a_non_finite_loss_at_an_unsampled_compiled_step_is_re_run_and_named(
    mode_restored, mode, row, step, graph_note
):
    """GRAPH_MODE keeps no weights before an unsampled step's update (the update spreads the NaN
    into every weight); the step's batch is re-run with the last whole copy (taken after step 4,
    the last sampled one at every=4: exact for step 5, two steps old for step 7) and names the layer."""
    ms.set_context(mode=mode)
    ms.set_seed(0)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 8)).astype(np.float32) + 3.0
    x[row] = 0.0  # batches of 16
    y = rng.integers(0, 3, 128).astype(np.int32)
    net = LogOfInput()
    model = ms.train.Model(net, nn.CrossEntropyLoss(), nn.SGD(net.trainable_params(), 0.01))
    watch = graphaudit.Watch(every=4, fail_on="never")
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)
    model.train(1, data, callbacks=[watch], dataset_sink_mode=False)
    found = watch.record.non_finite
    assert found.step == step and found.weight is not None
    assert found.forward == "head"  # log(0) reaches the head first: the same layer in both modes
    expected = "the weights " + ("its forward pass saw" if mode == ms.PYNATIVE_MODE else graph_note)
    assert expected in found.forward_note, found.forward_note


def test_a_re_run_with_older_weights_that_stays_finite_says_it_did_not_reproduce():
    """Weights NaN after an unsampled step (a divergence): the last copy is older and may give
    finite outputs; the note says the failure did not reproduce rather than blame nothing."""
    from mindspore import Tensor

    from graphaudit.watch.record import Recorder

    net = nn.Dense(2, 2)
    recorder = Recorder(net.trainable_params(), every=4)
    for step in range(1, 7):
        recorder.before(step)
        if step == 6:
            net.weight.set_data(Tensor(np.full((2, 2), np.nan, np.float32)))
        recorder.after(step, 1, 1.0 if step < 6 else math.nan, rerun=lambda weights: None)
    found = recorder.record.non_finite
    assert found.weight == "weight" and found.forward is None
    assert "the weights step 5 saw, the last copied (1 steps earlier" in found.forward_note
    assert found.forward_note.endswith(
        "did not reproduce with those weights (train with every=1 to keep each step's)"
    )


def test_sink_mode_on_the_cpu_trains_step_by_step_with_the_same_findings(mode_restored):
    """MindSpore trains without a sink on the CPU whatever dataset_sink_mode says: one call a step."""
    findings = []
    for sink in (False, True):
        sample = load(SAMPLES / "GA958" / "bad.py", name=f"sink_{sink}")
        ms.set_context(mode=ms.GRAPH_MODE)
        ms.set_seed(0)
        net = sample.Net()
        x, y = sample.data(160)
        data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(16)
        watch = graphaudit.Watch(every=1, fail_on="never")
        model = ms.train.Model(
            net, nn.CrossEntropyLoss(), nn.Adam(net.trainable_params(), learning_rate=0.002)
        )
        model.train(1, data, callbacks=[watch], dataset_sink_mode=sink, sink_size=4 if sink else -1)
        assert watch.record.steps_per_call == 1 and watch.record.steps == 10
        findings.append(gradient_findings(watch))
    assert findings[0] == findings[1] == {("GA958", "fc.weight")}


def test_a_device_sink_says_which_watchpoints_it_cannot_judge(mode_restored):
    """A device's sink runs sink_size steps a call: driven here as Model.train drives it (one
    callback pair around 5 real steps, cur_step_num advanced by 5), since the CPU cannot sink."""
    from mindspore.train.callback import RunContext
    from mindspore.train.callback._callback import InternalCallbackParam

    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    sample = load(SAMPLES / "GA958" / "good.py", name="device_sink")
    net = sample.Net()
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.002)
    train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer)
    x, y = sample.data(400)
    params = InternalCallbackParam(
        train_network=train,
        network=net,
        optimizer=optimizer,
        loss_fn=None,
        cur_step_num=0,
        cur_epoch_num=1,
        dataset_sink_mode=True,
        sink_size=5,
        train_dataset=None,
        train_dataset_element=(),  # a device sink feeds the graph itself
        batch_num=25,
        epoch_num=1,
    )
    context = RunContext(params)
    watch = graphaudit.Watch(every=5, fail_on="never")
    watch.on_train_begin(context)
    for call in range(5):
        watch.on_train_step_begin(context)
        for step in range(5):
            start = (call * 5 + step) * 16
            params.net_outputs = train(ms.Tensor(x[start : start + 16]), ms.Tensor(y[start : start + 16]))
        params.cur_step_num += 5
        watch.on_train_step_end(context)
    watch.on_train_end(context)
    record = watch.record
    assert record.steps_per_call == 5 and [s.step for s in record.samples] == [5, 10, 15, 20, 25]
    for check_id in ("GA956", "GA957", "GA965"):
        assert "dataset sink mode, 5 steps a call" in watch.report.skipped[check_id]
    assert {"GA951", "GA958", "GA960"} <= set(watch.report.checks_run)


def test_weights_too_large_to_copy_whole_are_not_re_run_and_it_says_why(monkeypatch):
    from mindspore import Tensor

    from graphaudit.watch import record as record_module

    monkeypatch.setattr(record_module, "WHOLE_BYTES", 0)  # as for a network over 16 MiB,
    monkeypatch.setattr(record_module, "TRACKED", 2)  # whose large weights are tracked at positions
    net = nn.Dense(2, 2)
    recorder = record_module.Recorder(net.trainable_params(), every=4)
    for step in range(1, 7):
        recorder.before(step)
        if step == 6:
            net.weight.set_data(Tensor(np.full((2, 2), np.nan, np.float32)))
        recorder.after(step, 1, 1.0 if step < 6 else math.nan, rerun=lambda weights: pytest.fail("re-run"))
    found = recorder.record.non_finite
    assert found.forward is None and found.forward_note.startswith("the forward pass was not re-run")
    assert "weights over 0 MiB are not copied whole" in found.forward_note

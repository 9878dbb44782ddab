"""probe=N: N real steps on one batch, measured per step, and everything put back bit for bit.

Restoring is tested as the one-step probe's is (tests/test_probe.py): every value of the
network, the optimizer and the train cell compared with ``tobytes()``, flags, the context
mode, the random draws that follow; and a probed network trained on afterwards matches a
twin that was never probed. With a dynamic loss scale too: ``TrainOneStepWithLossScaleCell``
cannot run on CPU (its overflow check is an NPU kernel), so the twins train with the same
step as the cell runs on GPU, written out in ``gpu_style_step``.
"""

from __future__ import annotations

import random

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import graphaudit
from graphaudit.capture.training.optimizer import optimizer_state_parameters
from graphaudit.capture.training.probe_steps import measure_steps
from graphaudit.checks._shared.curves import loss_trend

X = Tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32))
Y = Tensor((np.arange(8) % 3).astype(np.int32))


class BnDropNet(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 8, has_bias=False)
        self.bn = nn.BatchNorm1d(8)
        self.drop = nn.Dropout(p=0.5)
        self.head = nn.Dense(8, 3)

    def construct(self, x):
        return self.head(self.drop(ops.relu(self.bn(self.fc(x)))))


OPTIMIZERS = {
    "Momentum": lambda params: nn.Momentum(params, learning_rate=0.1, momentum=0.9),
    "Adam+wd": lambda params: nn.Adam(params, learning_rate=0.01, weight_decay=0.1),
}


def seed_all(seed: int) -> None:
    ms.set_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def draws() -> tuple:
    return (
        ops.uniform((3,), Tensor(0.0), Tensor(1.0)).asnumpy().tobytes(),
        np.random.rand(),
        random.random(),
    )


def state_of(*cells: nn.Cell) -> dict:
    params = {}
    for cell in cells:
        params.update({id(p): p for p in cell.get_parameters()})
        if isinstance(cell, nn.Optimizer):
            params.update({id(p): p for p in optimizer_state_parameters(cell)})
    flags = [
        (name, c.training, c._phase, c.requires_grad) for cell in cells for name, c in cell.cells_and_names()
    ]
    return {
        "values": {(p.name, key): p.asnumpy().tobytes() for key, p in params.items()},
        "requires_grad": {(p.name, key): p.requires_grad for key, p in params.items()},
        "flags": flags,
        "mode": ms.get_context("mode"),
    }


def gpu_style_step(train: nn.TrainOneStepWithLossScaleCell, x: Tensor, y: Tensor) -> bool:
    """What TrainOneStepWithLossScaleCell.construct does on GPU, op by op (its NPU check fails on CPU)."""
    scale = Tensor(train.scale_sense.asnumpy())
    weights = list(train.weights)

    def scaled(*inputs):
        loss = train.network(*inputs)
        return loss * ops.cast(scale, loss.dtype), loss

    _, grads = ms.value_and_grad(scaled, None, weights, has_aux=True)(x, y)
    grads = [g * ops.cast(ops.reciprocal(scale), g.dtype) for g in grads]
    overflow = not all(np.isfinite(g.asnumpy()).all() for g in grads)
    overflow = bool(train.loss_scaling_manager(train.scale_sense, Tensor(overflow, ms.bool_)).asnumpy())
    if not overflow:
        train.optimizer(tuple(grads))
    return overflow


def scaled_setup(seed: int, initial: float, window: int = 2) -> nn.TrainOneStepWithLossScaleCell:
    ms.set_seed(seed)
    net = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3)]).to_float(ms.float16)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    update = nn.DynamicLossScaleUpdateCell(loss_scale_value=initial, scale_factor=2, scale_window=window)
    return nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, scale_sense=update
    )


@pytest.fixture
def pynative():
    before = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=before)


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_five_steps_restore_everything_bit_for_bit(opt_name, pynative):
    seed_all(3)
    net = BnDropNet().set_train(True)
    optimizer = OPTIMIZERS[opt_name](net.trainable_params())
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer)
    step(X, Y)
    step(X, Y)  # non-zero moments, global_step 2
    before = state_of(net, optimizer)
    seed_all(11)
    expected = draws()
    seed_all(11)
    measured = measure_steps(net, optimizer, nn.CrossEntropyLoss(), (X,), Y, steps=5)
    assert len(measured.steps) == 5 and all(s.applied for s in measured.steps)
    assert measured.steps[-1].loss < measured.steps[0].loss  # it really trained...
    assert state_of(net, optimizer) == before  # ...and everything is back
    assert draws() == expected


def test_five_loss_scaled_steps_restore_the_loss_scale_too(pynative):
    train = scaled_setup(1, 2.0**24)  # float16 at 2**24: the first steps overflow and halve the scale
    gpu_style_step(train, X, Y)  # the update cell's counters are not at their initial values
    before = state_of(train)
    assert {"scale_sense", "current_iterator_step", "last_overflow_iterator_step"} <= {
        n for n, _ in before["values"]
    }
    report = graphaudit.audit(train, inputs=(X, Y), probe=5)
    assert state_of(train) == before
    (finding,) = report.by_check("GA913")
    assert finding.severity == "info" and "skipped" in finding.message


@pytest.mark.parametrize("kind", ["Momentum", "Adam+wd", "loss scale"])
def test_training_after_probe_5_matches_a_twin(kind, pynative):
    if kind == "loss scale":
        probed, twin = scaled_setup(5, 2.0**20), scaled_setup(5, 2.0**20)
        seed_all(9)
        gpu_style_step(probed, X, Y)
        graphaudit.audit(probed, inputs=(X, Y), probe=5)
        for _ in range(3):
            gpu_style_step(probed, X, Y)
        seed_all(9)
        for _ in range(4):
            gpu_style_step(twin, X, Y)
        pairs = [(probed, twin)]
    else:
        made = []
        for _ in range(2):
            ms.set_seed(5)
            net = BnDropNet().set_train(True)
            optimizer = OPTIMIZERS[kind](net.trainable_params())
            made.append(
                (net, optimizer, nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer))
            )
        (probed_net, probed_opt, probed), (twin_net, twin_opt, twin) = made
        seed_all(9)
        probed(X, Y)
        graphaudit.audit(probed_net, probed_opt, inputs=X, label=Y, loss_fn=nn.CrossEntropyLoss(), probe=5)
        probed(X, Y)
        probed(X, Y)
        seed_all(9)
        for _ in range(3):
            twin(X, Y)
        pairs = [(probed_net, twin_net), (probed_opt, twin_opt)]
    for a, b in pairs:
        for pa, pb in zip(a.get_parameters(), b.get_parameters()):
            assert pa.name == pb.name
            assert pa.asnumpy().tobytes() == pb.asnumpy().tobytes(), pa.name


def test_steps_are_measured_per_step(pynative):
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3)])
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    measured = measure_steps(net, optimizer, nn.CrossEntropyLoss(), (X,), Y, steps=4)
    names = [p.name for p in measured.parameters]
    weight = names.index("0.weight")
    first = measured.steps[0]
    assert [s.index for s in measured.steps] == [1, 2, 3, 4]
    assert first.weight_norms[weight] > 0 and first.grad_norms[weight] > 0
    # SGD: ‖Δw‖ = lr * ‖g‖, exactly what the first step's gradient says
    assert first.update_norms[weight] == pytest.approx(0.1 * first.grad_norms[weight], rel=1e-4)
    assert first.ratio(weight) == pytest.approx(first.update_norms[weight] / first.weight_norms[weight])
    assert measured.parameters[weight].shape == (16, 4)
    assert loss_trend([s.loss for s in measured.steps]) == "falls"


def test_a_fixed_scale_that_always_overflows_is_reported_once_and_nothing_else(pynative):
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3)]).to_float(ms.float16)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    update = nn.FixedLossScaleUpdateCell(loss_scale_value=2.0**24)
    train = nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, scale_sense=update
    )
    report = graphaudit.audit(train, inputs=(X, Y), probe=5)
    probe_ids = sorted({f.check_id for f in report.findings if f.check_id.startswith("GA9")})
    assert probe_ids == ["GA913"], report  # not GA901 (nothing was updated) nor GA903 (finite at scale 1)
    (finding,) = report.by_check("GA913")
    assert finding.severity == "warning" and "finite" in finding.message


def test_a_dynamic_scale_from_2_24_skips_the_first_steps_then_runs_n(pynative):
    train = scaled_setup(0, 2.0**24, window=1000)
    from graphaudit.evidence import EvidenceSet
    from graphaudit.evidence.probe_curve import ProbeCurve
    from graphaudit.runner.request import build_request

    curve = EvidenceSet(build_request(train, inputs=(X, Y), probe=3)).need(ProbeCurve)
    skipped = [s for s in curve.steps if not s.applied]
    assert skipped and len(curve.applied) == 3 and len(curve.steps) == 3 + len(skipped)
    scales = [s.loss_scale for s in curve.steps]
    assert scales[0] == 2.0**24 and scales[len(skipped)] == 2.0 ** (24 - len(skipped))


def test_probe_true_is_one_step_and_the_curve_checks_say_what_to_pass():
    net = nn.Dense(4, 3)
    report = graphaudit.audit(
        net, nn.SGD(net.trainable_params(), 0.1), inputs=X, label=Y, loss_fn=nn.CrossEntropyLoss(), probe=True
    )
    assert "GA901" in report.checks_run and "GA910" in report.checks_run
    skipped = {n.check_id: n for n in report.not_run}
    assert "probe=5" in skipped["GA906"].python


def test_a_train_cell_with_sens_is_probed_as_it_trains(pynative):
    """TrainOneStepCell(sens=S) with an optimizer loss_scale=S: the update is that of an unscaled step."""
    updates = []
    for sens in (None, 1024.0):
        ms.set_seed(0)
        net = nn.Dense(4, 3)
        optimizer = nn.SGD(net.trainable_params(), 0.1, loss_scale=sens or 1.0)
        train = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, sens=sens)
        measured = measure_steps(net, optimizer, nn.CrossEntropyLoss(), (X,), Y, steps=1, given=train)
        updates.append(measured.steps[0].update_norms[0])
        assert measured.parameters[0].grad_norm == pytest.approx(measured.steps[0].grad_norms[0])
    assert updates[1] == pytest.approx(updates[0], rel=1e-5)


@pytest.mark.parametrize(
    ("losses", "trend"),
    [([2.0, 1.5, 1.0], "falls"), ([2.0, 2.0, 2.0], "flat"), ([2.0, 2.5, 3.0], "rises"),
     ([2.0, 0.1, 5.0, 0.1], "rises"), ([2.0, float("nan"), 1.0], "diverged"), ([2.0, 1.0], "short"),
     ([7.8, 0.14, 8.6e-05, 0.081, 0.0], "falls")],
)  # fmt: skip
def test_loss_trend(losses, trend):
    assert loss_trend(losses) == trend

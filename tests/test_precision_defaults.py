"""Mixed precision, loss scale, and the MindSpore defaults that bite ported code (GA705-GA711).

Each pitfall is first measured on the MindSpore installed (2.10), so that a check never
rests on a belief about MindSpore: if a behaviour changes, its test here fails first.
"""

from __future__ import annotations

import inspect

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, amp, nn, ops
from mindspore.amp import FixedLossScaleManager
from mindspore.train import Model

import graphaudit


@pytest.fixture(autouse=True)
def pynative():
    before = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=before)


class Net(nn.Cell):
    def __init__(self, momentum: float = 0.9, pool: nn.Cell | None = None) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.bn = nn.BatchNorm2d(8, momentum=momentum)
        self.pool = pool if pool is not None else nn.MaxPool2d(kernel_size=2, stride=2)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.norm = nn.LayerNorm((8,))
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        h = self.gap(self.pool(ops.relu(self.bn(self.conv(x))))).reshape(x.shape[0], -1)
        return self.head(self.norm(h))


X = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
Y = Tensor(np.array([1, 3], np.int32))


def ids(report, *check_ids):
    return {(f.check_id, f.severity, f.subject) for f in report.findings if f.check_id in check_ids}


def audit(net, loss_fn=None, **kw):
    optimizer = kw.pop("optimizer", None) or nn.Momentum(net.trainable_params(), 0.01, 0.9)
    return graphaudit.audit(net, optimizer, inputs=X, label=Y, loss_fn=loss_fn or nn.CrossEntropyLoss(), **kw)


# -- the behaviours, measured ---------------------------------------------------------------------


def test_batchnorm_momentum_is_the_weight_of_the_running_value():
    ones = Tensor(np.full((2, 2), 10.0, np.float32))
    ported = nn.BatchNorm1d(2, momentum=0.1).set_train(True)
    ported(ones)
    default = nn.BatchNorm1d(2).set_train(True)
    default(ones)
    assert ported.moving_mean.asnumpy().tolist() == [9.0, 9.0]  # 90% from the batch
    assert default.moving_mean.asnumpy().tolist() == pytest.approx([1.0, 1.0])


def test_an_unreduced_loss_trains_on_the_sum():
    x = Tensor(np.random.default_rng(1).standard_normal((8, 4)).astype(np.float32))
    y = Tensor((np.arange(8) % 3).astype(np.int32))
    moved = {}
    for reduction in ("none", "mean"):
        ms.set_seed(1)
        net = nn.Dense(4, 3)
        before = net.weight.asnumpy().copy()
        loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction=reduction)
        nn.TrainOneStepCell(nn.WithLossCell(net, loss), nn.SGD(net.trainable_params(), 0.1))(x, y)
        moved[reduction] = float(np.abs(net.weight.asnumpy() - before).max())
    assert moved["none"] / moved["mean"] == pytest.approx(8.0, rel=1e-4)
    assert inspect.signature(nn.SoftmaxCrossEntropyWithLogits).parameters["reduction"].default == "none"


def test_sparse_false_with_integer_labels_raises_so_it_needs_no_check():
    loss = nn.SoftmaxCrossEntropyWithLogits()  # sparse=False
    with pytest.raises(TypeError):
        loss(Tensor(np.zeros((4, 3), np.float32)), Tensor(np.array([0, 1, 2, 0], np.int32)))


def test_pooling_defaults_to_stride_one():
    assert nn.MaxPool2d(2)(Tensor(np.ones((1, 1, 8, 8), np.float32))).shape == (1, 1, 7, 7)


def test_o2_keeps_normalisation_in_float32_and_o3_does_not():
    for level, dtype in (("O2", ms.float32), ("O3", ms.float16)):
        net = amp.auto_mixed_precision(Net(), level)
        graph = graphaudit.to_networkx(net, inputs=X)
        (call,) = [
            n
            for n, d in graph.nodes(data=True)
            if d.get("class_name") == "BatchNorm2d" and d["kind"] == "call"
        ]
        dtypes = {d["dtype"] for _, _, d in graph.out_edges(call, data=True) if d["kind"] == "flows"}
        assert dtypes == {str(dtype)}, level


# -- the checks ----------------------------------------------------------------------------------


def test_mixed_precision_o2_is_silent_o3_and_by_hand_are_not():
    checks = ("GA707", "GA708")
    assert ids(audit(amp.auto_mixed_precision(Net(), "O2")), *checks) == set()
    assert ids(audit(amp.auto_mixed_precision(Net(), "O3")), *checks) == {("GA707", "warning", "(root)")}
    by_hand = ids(audit(Net().to_float(ms.float16)), *checks)
    assert by_hand == {("GA707", "warning", "(root)"), ("GA708", "warning", "CrossEntropyLoss")}
    assert ids(audit(Net()), *checks) == set()


@pytest.mark.parametrize("level", ["O2", "O3"])
def test_amp_train_networks_cast_the_output_back_for_the_loss(level):
    net = Net()
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    train = amp.build_train_network(
        net, optimizer, nn.CrossEntropyLoss(), level=level, loss_scale_manager=None
    )
    report = graphaudit.audit(train, inputs=(X, Y))
    assert "GA708" in report.checks_run and not report.by_check("GA708")


def test_loss_scale_and_optimizer_must_agree():
    def model(optimizer_scale: float) -> Model:
        net = Net()
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9, loss_scale=optimizer_scale)
        manager = FixedLossScaleManager(128.0, drop_overflow_update=False)
        return Model(net, nn.CrossEntropyLoss(), optimizer, loss_scale_manager=manager)

    never = graphaudit.audit(model(1.0), inputs=(X, Y))
    (finding,) = never.by_check("GA705")
    assert finding.severity == "error" and "128 times too large" in finding.message
    assert not graphaudit.audit(model(128.0), inputs=(X, Y)).by_check("GA705")
    assert "too small" in graphaudit.audit(model(256.0), inputs=(X, Y)).by_check("GA705")[0].message

    def cell(optimizer_scale: float) -> nn.Cell:
        net = Net()
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9, loss_scale=optimizer_scale)
        update = nn.DynamicLossScaleUpdateCell(1024.0, 2, 1000)
        return nn.TrainOneStepWithLossScaleCell(
            nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, update
        )

    assert [f.severity for f in graphaudit.audit(cell(1024.0), inputs=(X, Y)).by_check("GA706")] == ["error"]
    assert not graphaudit.audit(cell(1.0), inputs=(X, Y)).by_check("GA706")
    plain = graphaudit.audit(Net(), inputs=X)
    assert {n.check_id for n in plain.not_run} >= {"GA705", "GA706"}


def test_ported_defaults():
    assert ids(audit(Net(momentum=0.1)), "GA709") == {("GA709", "warning", "bn")}
    assert ids(audit(Net(momentum=0.9)), "GA709") == set()
    loose = nn.SoftmaxCrossEntropyWithLogits(sparse=True)
    assert ids(audit(Net(), loose), "GA710") == {("GA710", "warning", "SoftmaxCrossEntropyWithLogits")}
    assert (
        ids(audit(Net(), nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")), "GA710") == set()
    )
    assert ids(audit(Net(pool=nn.MaxPool2d(2))), "GA711") == {("GA711", "warning", "pool")}
    assert ids(audit(Net(pool=nn.AvgPool2d(kernel_size=3, stride=1, pad_mode="same"))), "GA711") == set()
    assert ids(audit(Net(pool=nn.AvgPool2d(kernel_size=8))), "GA711") == set()  # 8x8 -> 1x1: a global pooling


def test_loss_not_reduced_needs_an_optimizer():
    report = graphaudit.audit(Net(), inputs=X, label=Y, loss_fn=nn.SoftmaxCrossEntropyWithLogits(sparse=True))
    assert not report.by_check("GA710") and "GA710" in {n.check_id for n in report.not_run}
    padded = nn.SequentialCell(
        [nn.Pad(((0, 0), (0, 0), (1, 1), (1, 1))), nn.AvgPool2d(kernel_size=3, stride=1)]
    )
    assert ids(audit(Net(pool=padded)), "GA711") == set()  # Res2Net: padded, then pooled at the same size

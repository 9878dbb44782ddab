"""The probe step runs one real training step, reports from the numbers, and restores everything."""

from __future__ import annotations

import random

import mindspore as ms
import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import graphaudit
from graphaudit.probe import (
    PROBE_CHECKS,
    ProbeInputError,
    ProbeStepError,
    optimizer_state_parameters,
    run_probe,
)

# -- networks --------------------------------------------------------------------------------


class BnDropNet(nn.Cell):
    """Dense -> BatchNorm -> ReLU -> Dropout -> Dense: moving statistics and random masks."""

    def __init__(self, fc_bias: bool = True) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 8, has_bias=fc_bias)
        self.bn = nn.BatchNorm1d(8)
        self.drop = nn.Dropout(p=0.5)
        self.head = nn.Dense(8, 3)

    def construct(self, x: Tensor) -> Tensor:
        return self.head(self.drop(ops.relu(self.bn(self.fc(x)))))


class DeadBranch(nn.Cell):
    """A branch whose output is multiplied by zero: its parameters never get a gradient."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.dead = nn.Dense(4, 3)

    def construct(self, x: Tensor) -> Tensor:
        return self.fc(x) + self.dead(x) * 0.0


class LogOfNegative(nn.Cell):
    """``log`` of a value that is negative on the probe batch: NaN loss, NaN gradients."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x: Tensor) -> Tensor:
        return ops.log(self.fc(x) - 100.0)


class FunctionalDropout(nn.Cell):
    """``ops.dropout`` called in construct: it advances MindSpore's per-operation seed counter."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)

    def construct(self, x: Tensor) -> Tensor:
        return ops.dropout(self.fc(x), p=0.5, training=self.training)


class Counter(nn.Cell):
    """A Parameter (requires_grad=False) written by construct: a buffer, not a frozen weight."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.calls = Parameter(Tensor(np.zeros((1,), np.float32)), name="calls", requires_grad=False)

    def construct(self, x: Tensor) -> Tensor:
        ops.assign_add(self.calls, Tensor(np.ones((1,), np.float32)))
        return self.fc(x)


X = Tensor(np.random.default_rng(0).standard_normal((8, 4)).astype(np.float32))
Y_CLASS = Tensor((np.arange(8) % 3).astype(np.int32))
Y_REG = Tensor(np.random.default_rng(1).standard_normal((8, 3)).astype(np.float32))


def ce_loss() -> nn.Cell:
    return nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")


OPTIMIZERS = {
    "Momentum": lambda params: nn.Momentum(params, learning_rate=0.1, momentum=0.9),
    "Adam+wd": lambda params: nn.Adam(params, learning_rate=0.01, weight_decay=0.1),
    "SGD": lambda params: nn.SGD(params, learning_rate=0.1),
}


def ids(findings) -> list[tuple[str, str]]:
    return sorted((f.check_id, f.subject) for f in findings)


# -- what the probe must leave untouched ------------------------------------------------------


def state_of(net: nn.Cell, optimizer: nn.Optimizer) -> dict:
    params = {id(p): p for p in net.get_parameters()}
    params.update({id(p): p for p in optimizer.get_parameters()})
    params.update({id(p): p for _, p in optimizer.parameters_and_names()})
    params.update({id(p): p for p in optimizer._params.values()})
    params.update({id(p): p for p in optimizer_state_parameters(optimizer)})
    cells = [*net.cells_and_names(), *optimizer.cells_and_names()]
    return {
        "values": {(p.name, key): p.asnumpy().tobytes() for key, p in params.items()},
        "dtypes": {(p.name, key): (str(p.dtype), tuple(p.shape)) for key, p in params.items()},
        "requires_grad": {(p.name, key): p.requires_grad for key, p in params.items()},
        "training": [(name, c.training, c._phase, c.requires_grad) for name, c in cells],
        "mode": ms.get_context("mode"),
    }


def next_random_draws() -> tuple:
    return (
        ops.uniform((3,), Tensor(0.0), Tensor(1.0)).asnumpy().tobytes(),
        np.random.rand(),
        random.random(),
    )


def seed_all(seed: int) -> None:
    ms.set_seed(seed)
    np.random.seed(seed)
    random.seed(seed)


def train_steps(net: nn.Cell, optimizer: nn.Optimizer, loss_fn: nn.Cell, steps: int) -> None:
    step = nn.TrainOneStepCell(nn.WithLossCell(net, loss_fn), optimizer)
    for _ in range(steps):
        step(X, Y_CLASS)


@pytest.fixture
def pynative():
    before = ms.get_context("mode")
    ms.set_context(mode=ms.PYNATIVE_MODE)
    yield
    ms.set_context(mode=before)


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_everything_is_restored_bit_for_bit(opt_name, pynative):
    seed_all(3)
    net = BnDropNet().set_train(True)
    net.fc.bias.requires_grad = False  # frozen, and in the optimizer below: the step moves it
    optimizer = OPTIMIZERS[opt_name](net.get_parameters())  # BN statistics too: decayed by Adam+wd
    train_steps(net, optimizer, ce_loss(), 2)  # non-zero moments, global_step 2
    before = state_of(net, optimizer)
    assert any(name == "global_step" for name, _ in before["values"])
    seed_all(11)
    expected_draws = next_random_draws()
    seed_all(11)

    result = run_probe(net, optimizer, ce_loss(), (X,), Y_CLASS)

    assert result.parameter("fc.weight").changed  # the step really ran...
    assert result.parameter("bn.moving_mean").forward_change > 0
    after = state_of(net, optimizer)
    for key in ("dtypes", "requires_grad", "training", "mode"):
        assert after[key] == before[key], key
    changed = [name for name, value in after["values"].items() if value != before["values"][name]]
    assert changed == []  # ...and every value of the network and the optimizer is back, bit for bit
    assert next_random_draws() == expected_draws


def _twins(seed: int, opt_name: str) -> list[tuple[nn.Cell, nn.Optimizer]]:
    pairs = []
    for _ in range(2):
        ms.set_seed(seed)  # same initial weights and the same Dropout seeds
        net = BnDropNet().set_train(True)
        pairs.append((net, OPTIMIZERS[opt_name](net.trainable_params())))
    (a, _), (b, _) = pairs
    for pa, pb in zip(a.get_parameters(), b.get_parameters()):
        assert pa.asnumpy().tobytes() == pb.asnumpy().tobytes()
    return pairs


@pytest.mark.parametrize(
    ("mode", "opt_name"),
    [(ms.PYNATIVE_MODE, "Momentum"), (ms.PYNATIVE_MODE, "Adam+wd"), (ms.GRAPH_MODE, "SGD")],
)
def test_training_after_a_probe_is_identical_to_training_without_one(mode, opt_name):
    """Hidden state too (Dropout's own random state, compiled graphs): the next steps match a twin."""
    before_mode = ms.get_context("mode")
    ms.set_context(mode=mode)
    try:
        (probed, probed_opt), (twin, twin_opt) = _twins(5, opt_name)
        # one step cell each, built (and in graph mode compiled) before the probe, as in a training loop
        probed_step = nn.TrainOneStepCell(nn.WithLossCell(probed, ce_loss()), probed_opt)
        twin_step = nn.TrainOneStepCell(nn.WithLossCell(twin, ce_loss()), twin_opt)
        seed_all(9)
        probed_step(X, Y_CLASS)
        run_probe(probed, probed_opt, ce_loss(), (X,), Y_CLASS)
        assert ms.get_context("mode") == mode
        probed_step(X, Y_CLASS)
        probed_step(X, Y_CLASS)
        seed_all(9)
        for _ in range(3):
            twin_step(X, Y_CLASS)
        for a, b in [(probed, twin), (probed_opt, twin_opt)]:
            for pa, pb in zip(a.get_parameters(), b.get_parameters()):
                assert pa.name == pb.name
                assert pa.asnumpy().tobytes() == pb.asnumpy().tobytes(), pa.name
    finally:
        ms.set_context(mode=before_mode)


def test_jit_train_step_after_a_probe_is_identical_to_one_without(pynative):
    """The MindSpore 2.x loop: value_and_grad + optimizer inside @ms.jit, compiled before the probe."""
    nets = []
    for _ in range(2):
        ms.set_seed(5)
        net = BnDropNet().set_train(True)
        optimizer = nn.Adam(net.trainable_params(), 0.01, weight_decay=0.1)
        grad_fn = ms.value_and_grad(nn.WithLossCell(net, ce_loss()), None, optimizer.parameters)

        def train_step(x, y, grad_fn=grad_fn, optimizer=optimizer):
            loss, grads = grad_fn(x, y)
            optimizer(grads)
            return loss

        nets.append((net, optimizer, ms.jit(train_step)))
    (probed, probed_opt, probed_step), (twin, twin_opt, twin_step) = nets
    seed_all(9)
    probed_step(X, Y_CLASS)
    run_probe(probed, probed_opt, ce_loss(), (X,), Y_CLASS)
    probed_step(X, Y_CLASS)
    seed_all(9)
    twin_step(X, Y_CLASS)
    twin_step(X, Y_CLASS)
    for a, b in [(probed, twin), (probed_opt, twin_opt)]:
        for pa, pb in zip(a.get_parameters(), b.get_parameters()):
            assert pa.asnumpy().tobytes() == pb.asnumpy().tobytes(), pa.name


def test_functional_dropout_seed_counter_is_restored(pynative):
    net = FunctionalDropout().set_train(True)
    seed_all(4)
    expected = net(X).asnumpy().tobytes()
    seed_all(4)
    run_probe(net, nn.SGD(net.trainable_params(), 0.1), nn.MSELoss(), (X,), Y_REG)
    assert net(X).asnumpy().tobytes() == expected


def test_failed_step_restores_everything_and_chains_the_cause(pynative):
    net = BnDropNet().set_train(True)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    before = state_of(net, optimizer)
    bad_label = Tensor(np.zeros((5,), np.int32))  # batch of 8 logits, 5 labels
    with pytest.raises(ProbeStepError) as info:
        run_probe(net, optimizer, ce_loss(), (X,), bad_label)
    assert isinstance(info.value, graphaudit.ForwardError)
    assert info.value.__cause__ is not None
    assert "Everything was restored" in str(info.value)
    assert state_of(net, optimizer) == before  # the BN statistics moved by the forward pass too


# -- findings -----------------------------------------------------------------------------------


@pytest.mark.parametrize("opt_name", sorted(OPTIMIZERS))
def test_clean_network_has_no_findings(opt_name, pynative):
    net = BnDropNet(fc_bias=False).set_train(True)
    result = run_probe(net, OPTIMIZERS[opt_name](net.trainable_params()), ce_loss(), (X,), Y_CLASS)
    assert result.findings == [], str(result)
    assert result.ok
    assert np.isfinite(result.loss) and result.loss > 0
    for name in ("fc.weight", "bn.gamma", "bn.beta", "head.weight", "head.bias"):
        probe = result.parameter(name)
        assert probe.in_optimizer and probe.changed and probe.max_abs_change > 0
        assert probe.grad_norm is not None and probe.grad_norm > 0 and probe.grad_finite
    # moving statistics move in the forward pass only: buffers, not "frozen weights that changed"
    stats = result.parameter("bn.moving_mean")
    assert stats.forward_change > 0 and stats.optimizer_change == 0 and stats.grad_norm is None


def test_bias_cancelled_by_batchnorm_is_a_warning_with_its_numbers(pynative):
    net = BnDropNet().set_train(True)  # Dense(4, 8) keeps its bias, then BatchNorm1d cancels it
    result = run_probe(net, nn.SGD(net.trainable_params(), 0.1), ce_loss(), (X,), Y_CLASS)
    (finding,) = result.findings
    assert (finding.check_id, finding.severity, finding.subject) == ("GA901", "warning", "fc.bias")
    assert "has_bias=False" in finding.fix and "BatchNorm" in finding.message
    bias = result.parameter("fc.bias")
    assert 0 < bias.grad_norm < 1e-6 and not bias.changed  # rounding noise: lr * grad < float resolution
    assert result.parameter("fc.weight").grad_norm > 1e-2


def test_trainable_parameter_missing_from_optimizer_is_confirmed_not_updated(pynative):
    net = BnDropNet().set_train(True)
    optimizer = nn.Momentum(net.head.trainable_params(), 0.1, 0.9)  # fc and bn forgotten
    result = run_probe(
        net, optimizer, ce_loss(), (X,), Y_CLASS, parameter_nodes={id(net.fc.weight): "param:x"}
    )
    # One optimizer built from the head leaves out fc and bn: one finding (fc.weight, whose node
    # the graph does not hold here, stands apart).
    assert ids(result.findings) == [("GA905", "(root)"), ("GA905", "fc.weight")]
    finding = result.by_check("GA905")[-1]
    assert finding.severity == "error" and finding.name == "probe-trainable-not-updated"
    assert finding.nodes == ("param:x",)
    grouped = result.by_check("GA905")[0]
    assert set(grouped.subjects) == {"bn.beta", "bn.gamma", "fc.bias"}
    assert "param:bn.beta" in grouped.nodes
    assert "not in the optimizer" in finding.message and "trainable_params" in finding.fix
    assert result.parameter("fc.weight").grad_norm > 0  # the gradient exists, and is thrown away
    assert not result.parameter("fc.weight").changed
    declared = run_probe(
        net, optimizer, ce_loss(), (X,), Y_CLASS, is_frozen=lambda name: name.startswith("fc.")
    )
    assert {s: f.severity for f in declared.by_check("GA905") for s in f.subjects}["fc.weight"] == "info"


def test_frozen_parameter_with_weight_decay_is_reported_with_the_reason(pynative):
    net = DeadBranch()
    net.fc.weight.requires_grad = False
    before = net.fc.weight.asnumpy().copy()
    optimizer = nn.SGD([net.fc.weight, net.fc.bias], learning_rate=0.1, weight_decay=0.1)
    result = run_probe(net, optimizer, nn.MSELoss(), (X,), Y_REG)
    frozen = result.by_check("GA902")
    assert [f.subject for f in frozen] == ["fc.weight"]
    assert frozen[0].severity == "error" and "weight_decay=0.1" in frozen[0].message
    assert "weight_decay=0.0" in frozen[0].fix
    # SGD: w <- w - lr * (0 + wd * w), i.e. multiplied by 0.99 (up to float32 rounding)
    expected = float(np.max(np.abs(before * 0.01)))
    assert result.parameter("fc.weight").optimizer_change == pytest.approx(expected, rel=1e-3)
    assert net.fc.weight.asnumpy().tobytes() == before.tobytes()


def test_frozen_parameter_moved_by_stale_momentum(pynative):
    net = DeadBranch()
    optimizer = nn.Momentum(net.fc.trainable_params(), 0.1, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    step(X, Y_REG)  # the moments are now non-zero
    net.fc.weight.requires_grad = False  # frozen after training started
    result = run_probe(net, optimizer, nn.MSELoss(), (X,), Y_REG)
    (finding,) = result.by_check("GA902")
    assert finding.subject == "fc.weight" and "momentum" in finding.message


def test_dead_branch_has_zero_gradient_and_does_not_change(pynative):
    net = DeadBranch()
    result = run_probe(net, nn.SGD(net.trainable_params(), 0.1), nn.MSELoss(), (X,), Y_REG)
    assert ids(result.findings) == [("GA901", "dead"), ("GA904", "dead")]  # one cause, one finding each
    assert all(set(f.subjects) == {"dead.weight", "dead.bias"} for f in result.findings)
    assert {f.severity for f in result.by_check("GA904")} == {"warning"}
    assert {f.severity for f in result.by_check("GA901")} == {"error"}
    dead = result.parameter("dead.weight")
    assert dead.grad_zero and dead.grad_norm == 0.0 and not dead.changed and dead.max_abs_change == 0.0
    assert result.parameter("fc.weight").grad_norm > 0


def test_dead_branch_with_adam_weight_decay_changes_but_still_has_zero_gradient(pynative):
    net = DeadBranch()
    result = run_probe(
        net, nn.Adam(net.trainable_params(), 0.01, weight_decay=0.1), nn.MSELoss(), (X,), Y_REG
    )
    assert ids(result.findings) == [("GA904", "dead")]
    # Adam normalises the decay term: the first step moves each weight by about the learning rate
    assert result.parameter("dead.weight").max_abs_change == pytest.approx(0.01, rel=1e-3)


def test_nan_gradient_is_reported(pynative):
    net = LogOfNegative()
    result = run_probe(net, nn.Momentum(net.trainable_params(), 0.1, 0.9), nn.MSELoss(), (X,), Y_REG)
    assert ids(result.findings) == [("GA903", "fc")]  # one cause: one finding for the weight and the bias
    finding = result.by_check("GA903")[0]
    assert sorted(finding.subjects) == ["fc.bias", "fc.weight"]
    assert (
        finding.severity == "error" and "NaN" in finding.message and "loss itself is nan" in finding.message
    )
    assert np.isnan(result.loss)
    assert result.parameter("fc.weight").grad_nan == 12 and result.parameter("fc.weight").grad_finite is False
    assert np.isfinite(net.fc.weight.asnumpy()).all()  # restored: not NaN


def test_buffer_written_by_construct_is_not_a_frozen_parameter_that_changed(pynative):
    net = Counter()
    result = run_probe(net, nn.SGD(net.trainable_params(), 0.1), nn.MSELoss(), (X,), Y_REG)
    assert result.findings == []
    assert result.parameter("calls").forward_change == 1.0
    assert net.calls.asnumpy().tolist() == [0.0]


def test_result_numbers_and_texts(pynative):
    net = DeadBranch()
    result = run_probe(net, nn.SGD(net.trainable_params(), 0.1), nn.MSELoss(), X, Y_REG.asnumpy())
    data = result.to_dict()
    assert data["optimizer"] == "SGD" and len(data["parameters"]) == 4
    assert {p["name"] for p in data["parameters"]} == {"fc.weight", "fc.bias", "dead.weight", "dead.bias"}
    assert "dead.weight" in result.table() and "GA901" in str(result)
    for finding in result.findings:
        assert finding.name == PROBE_CHECKS[finding.check_id]
        assert finding.message and finding.fix and finding.message != finding.fix


# -- errors --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("loss_fn", "label", "missing"), [(None, Y_REG, "a loss"), (nn.MSELoss(), None, "a label")]
)
def test_probe_without_label_or_loss_says_what_to_pass(loss_fn, label, missing):
    net = DeadBranch()
    with pytest.raises(ProbeInputError) as info:
        run_probe(net, nn.SGD(net.trainable_params()), loss_fn, (X,), label)
    assert isinstance(info.value, graphaudit.GraphAuditError)
    message = str(info.value)
    assert missing in message and "label=y" in message and "loss" in message
    assert "WithLossCell" not in message  # it says what to pass, not what the network is not


def test_probe_rejects_a_parameter_list_as_optimizer():
    net = DeadBranch()
    with pytest.raises(ProbeInputError, match=r"nn\.Optimizer"):
        run_probe(net, net.trainable_params(), nn.MSELoss(), (X,), Y_REG)

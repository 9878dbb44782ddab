"""Capturing changes nothing, and bad input gets a graphaudit error that says what to do."""

from __future__ import annotations

import random
import threading

import mindspore as ms
import numpy as np
import pytest
import twins
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.tensor import Tensor as TensorClass
from nets import AssignsParameter, Raises, Residual, TrainModeNet, tensor

import graphaudit
from graphaudit.capture.network.patching import function_sites

# the audit's restores around MindSpore's queue, and kernels that fail late in it: as users run
pytestmark = pytest.mark.asynchronous


def state_of(net: nn.Cell) -> dict:
    return {
        "values": {p.name: p.asnumpy().tobytes() for p in net.get_parameters()},
        "requires_grad": {p.name: p.requires_grad for p in net.get_parameters()},
        "training": {name: (c.training, c._phase) for name, c in net.cells_and_names()},
        "hooks": {
            name: (dict(c._forward_pre_hook), dict(c._forward_hook)) for name, c in net.cells_and_names()
        },
        "mode": ms.get_context("mode"),
        "device": ms.get_context("device_target"),
    }


def next_random_draws() -> tuple:
    return (
        ops.uniform((3,), Tensor(0.0), Tensor(1.0)).asnumpy().tobytes(),
        np.random.rand(),
        random.random(),
    )


@pytest.mark.parametrize("training", [True, False])
def test_capture_leaves_network_context_and_random_state_untouched(training):
    net = TrainModeNet().set_train(training)
    net.fc.bias.requires_grad = False
    hook_calls = []
    net.fc.register_forward_hook(lambda cell, inputs, output: hook_calls.append(1))
    before = state_of(net)
    ms.set_seed(7)
    np.random.seed(7)
    random.seed(7)
    expected_draws = next_random_draws()
    ms.set_seed(7)
    np.random.seed(7)
    random.seed(7)

    graph = graphaudit.to_networkx(net, inputs=tensor(4, 4))

    assert next_random_draws() == expected_draws
    assert state_of(net) == before
    assert hook_calls == [1]  # the user's hook ran during the pass and is still registered
    assert graph.number_of_nodes() > 0


def test_batchnorm_moving_statistics_are_restored_after_a_training_pass():
    net = Residual().set_train(True)
    before = net.bn.moving_mean.asnumpy().copy()
    net(tensor(2, 3, 8, 8, seed=1))  # a real training step does move them...
    assert not np.array_equal(net.bn.moving_mean.asnumpy(), before)
    moved = net.bn.moving_mean.asnumpy().copy()
    graphaudit.to_networkx(net, inputs=tensor(2, 3, 8, 8, seed=2))  # ...the capture does not
    assert np.array_equal(net.bn.moving_mean.asnumpy(), moved)


def test_a_training_pass_writes_stand_ins_not_the_batchnorm_statistics(monkeypatch):
    """BatchNorm writes copies of its moving statistics: the network's are never written, the output is the same."""
    from graphaudit.capture.network.isolation import Snapshot
    from graphaudit.capture.network.session import capture

    net = Residual().set_train(True)
    x = tensor(2, 3, 8, 8, seed=3)
    stand_ins, writes = [], []
    real_stand_in = Snapshot.stand_in

    def recording_stand_in(self, param):
        copy = real_stand_in(self, param)
        stand_ins.append((param.name, copy, param.asnumpy().copy()))
        return copy

    monkeypatch.setattr(Snapshot, "stand_in", recording_stand_in)
    monkeypatch.setattr(Parameter, "copy_", lambda self, *a, **k: writes.append(self.name), raising=False)
    before = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    output = capture(net, (x,)).output.asnumpy()

    statistics = [p.name for p in net.get_parameters() if "moving_" in p.name]
    assert len(statistics) == 4 and sorted(name for name, _, _ in stand_ins) == sorted(statistics)
    for name, copy, value in stand_ins:
        assert not np.array_equal(copy.asnumpy(), value), f"the kernel did not write {name}'s stand-in"
    assert writes == []  # nothing to put back
    assert all(np.array_equal(p.asnumpy(), before[p.name]) for p in net.get_parameters())
    monkeypatch.undo()
    assert np.array_equal(output, net(x).asnumpy())  # what a plain pass (after the audit) gives


def test_trainable_parameter_written_in_construct_is_restored():
    net = AssignsParameter()
    graphaudit.to_networkx(net, inputs=tensor(2, 4))
    assert np.array_equal(net.total.asnumpy(), np.zeros(4, np.float32))


def test_patches_are_removed_after_capture_even_when_construct_raises():
    call_before = nn.Cell.__call__
    add_before = vars(TensorClass).get("__add__")
    functions_before = [vars(site.owner)[site.name] for site in function_sites()]
    with pytest.raises(graphaudit.ForwardError):
        graphaudit.to_networkx(Raises(), inputs=tensor(1, 4))
    assert nn.Cell.__call__ is call_before
    assert vars(TensorClass).get("__add__") is add_before
    assert [vars(site.owner)[site.name] for site in function_sites()] == functions_before
    assert ms.get_context("mode") == ms.PYNATIVE_MODE


class SigmoidThenTanh(nn.Cell):
    def construct(self, x: Tensor) -> Tensor:
        return ops.tanh(ops.sigmoid(x))


def test_a_function_the_user_replaced_between_audits_is_left_alone_and_the_rest_traced(monkeypatch):
    """The wrappers of a namespace are installed in one go: not over a function replaced since they were planned."""
    graphaudit.to_networkx(SigmoidThenTanh(), inputs=tensor(1, 4))  # the install is planned by now
    tanh_before = vars(ms.ops)["tanh"]

    def users_sigmoid(x):
        return tanh_before(x) * 0 + 0.5

    monkeypatch.setattr(ms.ops, "sigmoid", users_sigmoid)
    graph = graphaudit.to_networkx(SigmoidThenTanh(), inputs=tensor(1, 4))

    traced = sorted(data["op_type"] for _, data in graph.nodes(data=True) if data["kind"] == "op")
    assert traced == [
        "add",
        "mul",
        "tanh",
        "tanh",
    ]  # the user's function ran as written, its operations traced
    assert vars(ms.ops)["sigmoid"] is users_sigmoid and vars(ms.ops)["tanh"] is tanh_before


def test_the_tracing_wrappers_cost_little_memory_each():
    """A capture installs a wrapper on every entry point (~2,600): each costs ~0.5 KiB (row 6 of the benchmark)."""
    import tracemalloc

    from graphaudit.capture.network import patching, wrappers

    sites = [*patching.function_sites(), *patching.tensor_method_sites()]  # found once per process
    assert not hasattr(sites[0], "__dict__")  # kept for the process: slots, no dict each
    entry_points = (
        1
        + len({id(s.original) for s in patching.function_sites()})
        + len(patching.tensor_method_sites())
        + len(patching.primitive_classes())
    )
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        with patching.patched(
            patching.cell_call_owners(()),
            wrappers._wrap_cell_call,
            wrappers._wrap_op,
            wrappers._wrap_primitive_call,
        ):
            installed = tracemalloc.get_traced_memory()[0] - before
            relu = ops.relu
    finally:
        tracemalloc.stop()
    assert relu is not ops.relu and relu.__wrapped__ is ops.relu  # what was wrapped stays one step away
    assert installed / entry_points < 580, f"{installed / entry_points:.0f} bytes per wrapped entry point"


@pytest.mark.parametrize(
    ("bad", "message"),
    [
        ([1, 2, 3], "got list"),
        (Residual, r"pass an instance, e.g. Residual\(...\)"),
        ("net", "got str"),
        ([nn.Dense(2, 2)], r"nn.SequentialCell\(cells\)"),
    ],
)
def test_non_cell_gets_a_clear_error(bad, message):
    with pytest.raises(graphaudit.NotACellError, match=message) as info:
        graphaudit.to_networkx(bad)
    assert isinstance(info.value, TypeError)


def test_model_gets_pointed_to_its_network():
    model = ms.train.Model(nn.Dense(2, 2))
    with pytest.raises(graphaudit.NotACellError, match=r"model\.predict_network"):
        graphaudit.to_networkx(model)


@pytest.mark.parametrize(
    ("inputs", "error", "message"),
    [
        ("not a tensor", None, None),
        ({"x": tensor(1, 4)}, graphaudit.InputError, "inputs is a dict"),
        ((tensor(1, 4), tensor(1, 4)), graphaudit.InputError, r"cannot take the 2 input\(s\)"),
        ((object(),), graphaudit.InputError, r"inputs\[0\] is a builtins.object"),
    ],
)
def test_bad_inputs_get_input_errors(inputs, error, message):
    net = nn.Dense(4, 2)
    if error is None:  # a str reaches construct, which then fails: a ForwardError
        with pytest.raises(graphaudit.ForwardError):
            graphaudit.to_networkx(net, inputs=inputs)
        return
    with pytest.raises(error, match=message):
        graphaudit.to_networkx(net, inputs=inputs)


def test_wrong_shape_names_the_failing_cell_and_chains_the_cause():
    with pytest.raises(graphaudit.ForwardError) as info:
        graphaudit.to_networkx(Residual(), inputs=tensor(1, 5, 8, 8))  # 5 channels, conv wants 3
    text = str(info.value)
    assert "in the cell at 'down.0'" in text or "in the cell at 'conv'" in text
    assert "Tensor[1, 5, 8, 8] Float32" in text
    assert "Check that `inputs` match" in text
    assert info.value.__cause__ is not None


def test_construct_that_raises_is_reported_with_its_message():
    with pytest.raises(graphaudit.ForwardError, match="deliberate failure in construct") as info:
        graphaudit.to_networkx(Raises(), inputs=tensor(1, 4))
    assert "in Raises.construct" in str(info.value)
    assert isinstance(info.value.__cause__, RuntimeError)


def test_numpy_inputs_are_accepted():
    graph = graphaudit.to_networkx(nn.Dense(4, 2), inputs=np.ones((1, 4), np.float32))
    assert graph.nodes["input:0"]["shape"] == "[1, 4]"


def test_training_after_a_capture_matches_training_without_one():
    """A twin trained without a capture ends bit-identical: capture leaves no trace in training.

    This catches restores that replace storage (``set_data`` silently stops an already compiled
    optimizer from updating the parameter in PyNative mode) and random state kept inside
    Dropout's primitive, which ``set_rng_state`` does not reset.
    """

    def twin():
        ms.set_seed(11)
        net = TrainModeNet().set_train(True)
        step = nn.TrainOneStepCell(
            nn.WithLossCell(net, nn.MSELoss()), nn.Momentum(net.trainable_params(), 0.1, 0.9)
        )
        return net, step

    x, y = tensor(4, 4, seed=5), tensor(4, 8, seed=6)
    (probed, probed_step), (plain, plain_step) = twin(), twin()
    for step in (probed_step, plain_step):
        step(x, y)
    graphaudit.to_networkx(probed, inputs=x)
    for _ in range(2):
        probed_step(x, y)
        plain_step(x, y)
    assert {p.name: p.asnumpy().tobytes() for p in probed.get_parameters()} == {
        p.name: p.asnumpy().tobytes() for p in plain.get_parameters()
    }


# Float32 bit patterns a comparison by value would miss: NaNs with payloads, a denormal, -0.0.
ODD_FLOATS = np.array([0x7FC00001, 0xFFC12345, 0x00000001, 0x80000000], np.uint32).view(np.float32)


class WritesEveryWay(nn.Cell):
    """Writes parameters in construct through every kind of write a pass can make."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.bn = nn.BatchNorm1d(4)
        self.assigned = Parameter(Tensor(ODD_FLOATS.copy()), name="assigned")
        self.summed = Parameter(Tensor(np.arange(4, dtype=np.float32)), name="summed")
        self.copied = Parameter(Tensor(np.arange(4, dtype=np.float32)), name="copied")
        self.item = Parameter(Tensor(np.arange(4, dtype=np.float32)), name="item")
        self.scattered = Parameter(Tensor(np.arange(8, dtype=np.float32).reshape(2, 4)), name="scattered")
        self.counter = Parameter(Tensor(np.array(3, np.int32)), name="counter", requires_grad=False)

    def construct(self, x: Tensor) -> Tensor:
        y = self.bn(self.fc(x))
        ops.assign(self.assigned, y.sum(0))
        ops.assign_add(self.summed, y.sum(0) + 1.0)  # a batch-normalised y sums to ~0 over the batch
        self.copied.copy_(y.sum(0))
        self.item[1] = 9.0
        ops.scatter_update(self.scattered, Tensor(np.array([0], np.int32)), y[:1])
        ops.assign_add(self.counter, Tensor(np.array(1, np.int32)))
        return y


def bits_of(net: nn.Cell) -> dict[str, bytes]:
    return {p.name: p.asnumpy().tobytes() for p in net.get_parameters()}


@pytest.mark.parametrize("training", [True, False])
def test_every_kind_of_write_in_construct_is_restored_bit_for_bit(training):
    net = WritesEveryWay().set_train(training)
    x = tensor(3, 4, seed=3)
    before = bits_of(net)
    net(x)  # the pass really writes every one of them
    moved = bits_of(net)
    written = {"assigned", "summed", "copied", "item", "scattered", "counter"}
    if training:
        written |= {"bn.moving_mean", "bn.moving_variance"}
    assert {name for name in before if before[name] != moved[name]} == written
    graphaudit.to_networkx(net, inputs=x)
    assert bits_of(net) == moved


def test_a_train_step_traced_leaves_weights_and_optimizer_state_bit_for_bit():
    net = TrainModeNet().set_train(True)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer).set_train(True)
    x, y = tensor(4, 4, seed=5), tensor(4, 8, seed=6)
    step(x, y)  # moments and global_step are no longer their initial values
    state = {p.name: p.asnumpy().tobytes() for p in step.get_parameters()}
    state.update({f"opt.{p.name}": p.asnumpy().tobytes() for p in optimizer.get_parameters()})
    graphaudit.to_networkx(step, inputs=(x, y))
    after = {p.name: p.asnumpy().tobytes() for p in step.get_parameters()}
    after.update({f"opt.{p.name}": p.asnumpy().tobytes() for p in optimizer.get_parameters()})
    assert after == state


class FailsLateAfterWriting(nn.Cell):
    """Writes one parameter, runs a kernel that fails asynchronously (BCELoss given -1), writes another."""

    def __init__(self) -> None:
        super().__init__()
        self.first = Parameter(Tensor(np.arange(4, dtype=np.float32)), name="first")
        self.second = Parameter(Tensor(np.arange(4, dtype=np.float32)), name="second")
        self.loss = nn.BCELoss()

    def construct(self, x: Tensor) -> Tensor:
        ops.assign(self.first, x)
        loss = self.loss(x, ops.ones_like(x))
        ops.assign(self.second, x)
        return loss


def test_a_pass_failing_asynchronously_restores_what_ran_and_leaves_the_rest():
    """The save before the second write waits for the failing kernel, so the failure is
    raised before that write is queued (a queued copy instead was dropped 5-7 times in 40
    under load while the write after it ran: see the load test below)."""
    net = FailsLateAfterWriting()
    before = bits_of(net)
    with pytest.raises(graphaudit.ForwardError):
        graphaudit.to_networkx(net, inputs=Tensor(np.array([2.0, -1.0, 0.5, 0.5], np.float32)))
    assert bits_of(net) == before


@pytest.mark.parametrize("dtype", [ms.float32, ms.float16, ms.bfloat16, ms.int64, ms.bool_])
def test_a_save_waits_for_the_queued_kernels_and_restores_every_dtype(dtype, monkeypatch):
    """A save before a write in the middle of a pass waits for the pass's queued kernels
    (that is what raises an asynchronous failure before the write), then restores exactly."""
    from graphaudit.capture.network import isolation

    param = Parameter(Tensor(np.array([1, 0, 1, 1])).astype(dtype), name="p")
    original = param.astype(ms.float32).asnumpy().copy()
    snapshot = isolation.Snapshot(cells=[], parameters=[param])
    waits = []
    with monkeypatch.context() as patch:
        patch.setattr(isolation, "synchronize", lambda: waits.append(True))
        snapshot.save_parameter(param)
        snapshot.save_parameter(param)  # saved once: the second save neither waits nor reads
    assert waits == [True]
    param.set_data(Tensor(np.zeros(4)).astype(dtype))
    snapshot.restore()
    assert np.array_equal(param.astype(ms.float32).asnumpy(), original)


def test_a_pass_failing_asynchronously_under_load_restores_every_time(tmp_path):
    """The load that made a queued copy unsound: two busy processes beside 20 failing passes."""
    busy = [twins.start("-c", "while True: pass", cwd=tmp_path) for _ in range(2)]
    try:
        for _ in range(20):
            net = FailsLateAfterWriting()
            before = bits_of(net)
            with pytest.raises(graphaudit.ForwardError):
                graphaudit.to_networkx(net, inputs=Tensor(np.array([2.0, -1.0, 0.5, 0.5], np.float32)))
            assert bits_of(net) == before
    finally:
        for process in busy:
            process.kill()
            process.wait()


def test_a_numpy_random_function_the_user_replaced_between_audits_is_still_theirs_after(monkeypatch):
    """The random-state routing is planned once; a function replaced since is planned anew, not put back over."""
    graphaudit.to_networkx(TrainModeNet().set_train(True), inputs=tensor(4, 4))  # planned by now

    def users_rand(*shape):
        return np.zeros(shape)

    monkeypatch.setattr(np.random, "rand", users_rand)
    graphaudit.to_networkx(TrainModeNet().set_train(True), inputs=tensor(4, 4))
    assert np.random.rand is users_rand
    monkeypatch.undo()  # numpy's own again: the next audit's draws from it are its own once more
    np.random.seed(3)
    expected = np.random.rand()
    np.random.seed(3)
    # With another thread alive the audit cannot put numpy's state back afterwards (that thread
    # may have drawn): only the routing keeps the audit's draw off it.
    done = threading.Event()
    other = threading.Thread(target=done.wait)
    other.start()
    try:
        graphaudit.to_networkx(DrawsFromNumpy(), inputs=tensor(4, 4))
    finally:
        done.set()
        other.join()
    assert np.random.rand() == expected


class DrawsFromNumpy(nn.Cell):
    def construct(self, x: Tensor) -> Tensor:
        return x * float(np.random.rand())

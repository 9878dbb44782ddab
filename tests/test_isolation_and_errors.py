"""Capturing changes nothing, and bad input gets a graphaudit error that says what to do."""

from __future__ import annotations

import random

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from mindspore.common.tensor import Tensor as TensorClass
from nets import AssignsParameter, Raises, Residual, TrainModeNet, tensor

import graphaudit
from graphaudit.capture.patching import function_sites


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

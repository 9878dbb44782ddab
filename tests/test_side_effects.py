"""What an audit leaves behind outside the network: no IR files of its own compiles in the
user's ``save_graphs_path``, no attribute MindSpore's ``jit`` adds to the optimizer."""

from __future__ import annotations

import os

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit


@pytest.fixture
def saving_graphs(tmp_path):
    before = ms.get_context("save_graphs"), ms.get_context("save_graphs_path")
    ms.set_context(save_graphs=True, save_graphs_path=str(tmp_path))
    try:
        yield tmp_path
    finally:
        ms.set_context(save_graphs=before[0], save_graphs_path=before[1])


def _setup() -> tuple[nn.Cell, nn.Optimizer, dict]:
    net = nn.SequentialCell([nn.Dense(3, 4), nn.ReLU(), nn.Dense(4, 2)])
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    data = {
        "inputs": Tensor(np.ones((2, 3), np.float32)),
        "label": Tensor(np.zeros((2, 2), np.float32)),
        "loss_fn": nn.MSELoss(),
    }
    return net, optimizer, data


def test_the_audits_compiles_write_no_ir_into_the_users_save_graphs_path(saving_graphs) -> None:
    net, optimizer, data = _setup()
    graphaudit.audit(net, optimizer, **data, graph_mode=True, probe=True)
    written = [name for _, _, names in os.walk(saving_graphs) for name in names]
    assert written == [], f"{len(written)} IR files, e.g. {written[:3]}"
    assert ms.get_context("save_graphs") == 2  # the user's setting, put back (True is stored as 2)


def test_the_probe_leaves_the_optimizers_attributes_as_it_found_them() -> None:
    net, optimizer, data = _setup()
    before = dict(vars(optimizer))
    graphaudit.audit(net, optimizer, **data, probe=3)
    after = vars(optimizer)
    assert sorted(set(after) - set(before)) == []  # no __parse_method__, no _mutable_flags
    # What MindSpore's Cell records on its first call stays as MindSpore set it (see docs/probe.md).
    first_call = {"_phase_cache", "_is_check_and_refresh", "_init_flag"} | {
        n for n in before if n.startswith("_lazy_")
    }
    assert [
        name for name, value in before.items() if after[name] is not value and name not in first_call
    ] == []


class _SlicedLayers(nn.Cell):
    """mindone.transformers' decoder loop (``for layer in self.layers[: n]``, 40 of its models).

    MindSpore's ``CellList[a:b]`` builds a new CellList, and its auto-prefix renames every
    sliced layer's parameters (``layers.0.weight`` -> ``0.weight``) and clears their ``is_init``.
    """

    def __init__(self) -> None:
        super().__init__()
        self.layers = nn.CellList([nn.Dense(3, 3), nn.Dense(3, 3)])
        self.head = nn.Dense(3, 2)
        self.head.bias.requires_grad = False

    def construct(self, x: Tensor) -> Tensor:
        for layer in self.layers[:2]:
            x = layer(x)
        return self.head(x)


@pytest.mark.parametrize("how", ["trace", "probe", "graph_mode"])
def test_an_audit_leaves_parameter_names_values_and_requires_grad_as_it_found_them(how) -> None:
    net = _SlicedLayers()
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    data = {"inputs": Tensor(np.ones((1, 3), np.float32)), "label": Tensor(np.zeros((1, 2), np.float32))}

    def state() -> list:
        return [(p.name, p.requires_grad, p.is_init, p.asnumpy().tobytes()) for p in net.get_parameters()]

    before = state()
    assert before[0][0] == "layers.0.weight"
    options = {"probe": 2} if how == "probe" else {"graph_mode": True} if how == "graph_mode" else {}
    graphaudit.audit(net, optimizer, **data, loss_fn=nn.MSELoss(), **options)
    assert state() == before
    net(data["inputs"])  # the user's own call renames, as it always did: the audit did not hide it
    assert net.layers[0].weight.name == "0.weight"

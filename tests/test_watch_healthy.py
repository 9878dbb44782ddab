"""Healthy runs stay silent (issue 38, item 5): regressions found by the recipes of ``tests/healthy_recipes.py``.

- GRAPH_MODE: the gradient tap's branch dropped AdamWeightDecay's update (its construct is
  compiled apart, ``@jit(backend="ms_backend")``): a watched run never trained, GA960 fired.
- ``nn.warmup_lr`` holds the learning rate at 0 for the first epoch: GA960 stopped the run there.
"""

from __future__ import annotations

from typing import Any

import mindspore as ms
import numpy as np
import pytest
from healthy_recipes import MODES, RECIPES, run
from mindspore import Tensor, nn

import graphaudit
from graphaudit.watch.compiled import tap_train_network


@pytest.fixture
def mode_restored():
    mode = ms.get_context("mode")
    yield
    ms.set_context(mode=mode)


def _data():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((128, 8)).astype(np.float32)
    return ms.dataset.NumpySlicesDataset({"x": x, "y": (x[:, 0] > 0).astype(np.int32)}, shuffle=False).batch(
        16
    )


@pytest.mark.parametrize(
    "make", [lambda p: nn.AdamWeightDecay(p, 1e-2, weight_decay=0.01), lambda p: nn.Momentum(p, 0.1, 0.9)]
)
def test_the_tap_keeps_the_update_and_reads_the_norms(mode_restored, make):
    ms.set_context(mode=ms.GRAPH_MODE)
    x = Tensor(np.random.default_rng(0).standard_normal((32, 4)).astype(np.float32))
    y = Tensor((np.arange(32) % 2).astype(np.int32))
    weights = {}
    for tapped in (False, True):
        ms.set_seed(0)
        net = nn.Dense(4, 2)
        optimizer = make(net.trainable_params())
        step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer)
        tap = tap_train_network(step, optimizer) if tapped else None
        for i in range(4):
            if tap is not None and i % 2 == 0:
                tap.tap.mark()
            elif tap is not None:
                tap.tap.want(False)
            step(x, y)
            if tap is not None and i % 2 == 0:
                assert tap.tap.read() is not None
        weights[tapped] = net.weight.asnumpy().copy()
    assert np.abs(weights[False]).max() > 0
    assert np.array_equal(weights[False], weights[True])


def test_a_warm_up_from_zero_does_not_stop_the_run(mode_restored):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    schedule = nn.warmup_lr(0.1, 3 * 8, 8, 2)  # the first epoch at 0
    watch = graphaudit.Watch(every=2)  # fail_on="error": GA960 stopped it after epoch 1
    optimizer = nn.Momentum(net.trainable_params(), schedule, 0.9)
    ms.train.Model(net, nn.CrossEntropyLoss(), optimizer).train(
        3, _data(), callbacks=[watch], dataset_sink_mode=False
    )
    assert "GA960" not in [f.check_id for f in watch.report.findings]


def test_a_run_that_never_moves_is_still_caught_at_the_end(mode_restored):
    ms.set_context(mode=ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    watch = graphaudit.Watch(every=2, fail_on="never")
    optimizer = nn.SGD(net.trainable_params(), 0.0)
    ms.train.Model(net, nn.CrossEntropyLoss(), optimizer).train(
        2, _data(), callbacks=[watch], dataset_sink_mode=False
    )
    assert "GA960" in [f.check_id for f in watch.report.findings]


# -- the recipes: real data, learning well, watched: no warning, no error -----------------------
# Every recipe in both modes is the matrix (GRAPHAUDIT_EXHAUSTIVE=1; PyNative takes minutes a
# recipe on 2 cores); the suite runs the runs that had false alarms, in GRAPH_MODE: GA953 on
# breast cancer (its validation loss +51% above its best at a held accuracy) and GA954 on wine
# (still falling 3.7% an epoch at 0.0097).
REPRESENTATIVES = {("breast_cancer_adamw_cosine", "graph"), ("wine_adam", "graph")}


def _cases() -> list[Any]:
    return [
        pytest.param(name, mode, marks=() if (name, mode) in REPRESENTATIVES else pytest.mark.exhaustive)
        for name, recipe in RECIPES.items()
        if recipe.suite
        for mode in MODES
    ]


@pytest.mark.parametrize(("name", "mode"), _cases())
def test_a_healthy_recipe_learns_and_the_watch_stays_silent(mode_restored, name, mode):
    outcome = run(name, mode)
    assert outcome.accuracy >= RECIPES[name].min_accuracy
    assert outcome.loud == [], [f.message for f in outcome.seen]


@pytest.mark.parametrize(
    "mode", [pytest.param("graph"), pytest.param("pynative", marks=pytest.mark.exhaustive)]
)
def test_random_labels_may_be_flat_but_never_diverge_or_oscillate(mode_restored, mode):
    outcome = run("random_labels", mode)
    assert {c for c, _ in outcome.loud} <= {"GA952"}, [f.message for f in outcome.seen]

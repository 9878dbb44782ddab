"""GA965: the first loss against a uniform guess's, read the same way in PyNative and GRAPH_MODE."""

from __future__ import annotations

import math
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn
from sample_audits import load

import graphaudit
from graphaudit.watch.start import chance_of

SAMPLE = load(Path(__file__).resolve().parent.parent / "samples" / "GA965" / "bad.py", name="ga965_start")
MODES = {"pynative": ms.PYNATIVE_MODE, "graph": ms.GRAPH_MODE}


@pytest.fixture(params=sorted(MODES))
def mode(request):
    before = ms.get_context("mode")
    ms.set_context(mode=MODES[request.param])
    yield MODES[request.param]
    ms.set_context(mode=before)


def watched(sigma: float, loss_fn: nn.Cell | None = None, **watch: object) -> graphaudit.Watch:
    ms.set_seed(0)
    net = SAMPLE.network(sigma)
    model = ms.train.Model(
        net, loss_fn or nn.CrossEntropyLoss(), nn.Momentum(net.trainable_params(), 0.01, 0.9)
    )
    w = graphaudit.Watch(**{"fail_on": "never", **watch})
    model.train(1, SAMPLE.dataset(), callbacks=[w], dataset_sink_mode=False)
    return w


def start_findings(w: graphaudit.Watch) -> list[tuple[str, str]]:
    return [(f.severity, f.message.split(" (")[0]) for f in w.report.findings if f.check_id == "GA965"]


@pytest.mark.parametrize(
    ("sigma", "severity"), [(1.0, "error"), (0.45, "warning"), (math.sqrt(2 / 64), None), (0.01, None)]
)
def test_the_first_loss_is_judged_the_same_in_both_modes(mode, sigma, severity):
    w = watched(sigma)
    assert "GA965" in w.report.checks_run, w.report.skipped
    assert w.record.chance.what == "a softmax cross-entropy over 10 classes"
    found = start_findings(w)
    assert [s for s, _ in found] == ([severity] if severity else [])
    assert ms.get_context("mode") == mode  # the isolated forward pass ran in PyNative and put it back


def test_the_same_message_in_both_modes():
    messages = []
    for mode in (ms.PYNATIVE_MODE, ms.GRAPH_MODE):
        ms.set_context(mode=mode)
        messages.append(start_findings(watched(1.0)))
    ms.set_context(mode=ms.PYNATIVE_MODE)
    assert messages[0] == messages[1] and messages[0]


def test_an_absurd_start_stops_the_run_at_its_first_step(mode):
    with pytest.raises(graphaudit.WatchFailed) as failed:
        watched(1.0, fail_on="error")
    assert failed.value.finding.check_id == "GA965"
    assert failed.value.report is not None


@pytest.mark.parametrize(
    ("loss_fn", "reason"),
    [
        (nn.MSELoss(), "the loss is nn.MSELoss"),
        (nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="sum"), "reduction='sum'"),
    ],
)
def test_a_loss_without_a_known_chance_level_is_not_run_with_the_reason(loss_fn, reason):
    if isinstance(loss_fn, nn.MSELoss):
        ms.set_seed(0)
        net = SAMPLE.network(1.0)
        x = np.random.default_rng(0).standard_normal((64, 64)).astype(np.float32)
        data = ms.dataset.NumpySlicesDataset({"x": x, "y": x[:, :10].copy()}, shuffle=False).batch(32)
        model = ms.train.Model(net, loss_fn, nn.SGD(net.trainable_params(), 0.0))
        w = graphaudit.Watch(fail_on="never")
        model.train(1, data, callbacks=[w], dataset_sink_mode=False)
    else:
        w = watched(1.0, loss_fn)
    assert "GA965" not in w.report.checks_run
    assert reason in w.report.skipped["GA965"]


def test_a_loop_says_why_it_cannot_judge_the_start():
    ms.set_seed(0)
    net = nn.Dense(4, 3)
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    with graphaudit.watch(net, optimizer, fail_on="never") as w:
        w.step(loss=Tensor(1.0))
    assert "does not say its loss function" in w.report.skipped["GA965"]


def test_binary_cross_entropies_are_judged_against_ln_2():
    net = nn.Dense(4, 1)
    x = (Tensor(np.ones((2, 4), np.float32)),)
    assert chance_of(nn.BCEWithLogitsLoss(), net, x).loss == pytest.approx(math.log(2))
    assert (
        chance_of(nn.CrossEntropyLoss(), net, x)
        == "the network's output has 1 class along the loss's class axis"
    )


def test_a_subclass_of_a_cross_entropy_is_not_taken_for_it():
    class Regularised(nn.CrossEntropyLoss):
        def construct(self, logits, labels):
            return super().construct(logits, labels) + 10.0

    assert "Regularised" in chance_of(Regularised(), nn.Dense(4, 3), ())

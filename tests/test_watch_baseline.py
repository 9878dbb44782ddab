"""A baseline from a known-good run (``Watch(baseline=...)``): healthy reruns are silent, planted regressions found.

Every run is real (``tests/baseline_recipe.py``: an MLP on scikit-learn's digits, 168 steps):
a healthy run writes its ``samples.jsonl`` with ``out=``, then the same recipe is trained again
against it, healthy (another data order) and with one regression planted each: a layer left
out of the optimizer (GA968), a 10x learning rate (GA967), the warm-up dropped (GA966). Under
``Model.train`` in PyNative and in GRAPH_MODE (gradient norms from the compiled step's tap), and
a functional loop under ``graphaudit.watch()``.
"""

from __future__ import annotations

import json
from pathlib import Path

import baseline_recipe as recipe
import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.errors import BaselineError

NEW = ("GA966", "GA967", "GA968")
WAYS = [("model", False), ("model", True), ("loop", False)]
IDS = ["model-pynative", "model-graph", "loop"]


# Every way finds the frozen layer and keeps the healthy rerun silent; the 10x rate and the
# dropped warm-up are found in GRAPH_MODE in the suite, in the other ways with
# GRAPHAUDIT_EXHAUSTIVE=1 (each training is ~15 s of a 2-core machine's suite).
OTHER_WAYS = pytest.mark.parametrize(
    "recorded",
    [
        pytest.param(w, id=i, marks=() if w == ("model", True) else pytest.mark.exhaustive)
        for w, i in zip(WAYS, IDS)
    ],
    indirect=True,
)


@pytest.fixture(scope="module", params=WAYS, ids=IDS)
def recorded(request, tmp_path_factory) -> tuple[str, bool, Path]:
    """A healthy run of the recipe, its samples written with out= (one per way of training)."""
    how, graph = request.param
    folder = tmp_path_factory.mktemp(f"good-{how}-{int(graph)}")
    watch = recipe.train(how=how, graph=graph, out=folder)
    assert not [f for f in watch.report.findings if f.severity != "info"], watch.report
    return how, graph, folder / "samples.jsonl"


def found(watch) -> dict[str, list]:
    report = watch.report
    assert set(NEW) <= set(report.checks_run), {c: report.skipped.get(c) for c in NEW}
    return {c: [f for f in report.by_check(c) if f.severity != "info"] for c in NEW}


def test_a_healthy_rerun_with_another_data_order_is_silent(recorded):
    how, graph, baseline = recorded
    watch = recipe.train(how=how, graph=graph, baseline=baseline, data_seed=2)
    assert not any(found(watch).values()), watch.report
    loud = [f for f in watch.report.findings if f.severity != "info"]
    assert not loud, watch.report
    # nor at any judgement while it trained (each epoch's end: shorter curves, smaller blocks)
    assert not [f for f in watch.seen if f.check_id in NEW], watch.seen


def test_a_layer_left_out_of_the_optimizer_is_found(recorded):
    how, graph, baseline = recorded
    watch = recipe.train(how=how, graph=graph, baseline=baseline, data_seed=2, freeze=True)
    hits = found(watch)["GA968"]
    assert [f.subjects for f in hits] == [("2.weight",)], watch.report
    assert hits[0].severity == "error" and "not in this run's optimizer" in hits[0].message


@OTHER_WAYS
def test_a_ten_times_larger_learning_rate_is_found(recorded):
    how, graph, baseline = recorded
    watch = recipe.train(how=how, graph=graph, baseline=baseline, data_seed=2, rate=10 * recipe.RATE)
    hits = found(watch)
    assert hits["GA967"] and "0.weight" in hits["GA967"][0].subjects, watch.report
    assert "update ratio" in hits["GA967"][0].message and "larger" in hits["GA967"][0].message
    assert not hits["GA968"], watch.report


@OTHER_WAYS
def test_a_dropped_warm_up_is_found(recorded):
    how, graph, baseline = recorded
    watch = recipe.train(how=how, graph=graph, baseline=baseline, data_seed=2, warmup=False)
    hits = found(watch)
    assert hits["GA966"] and "below it" in hits["GA966"][0].message, watch.report
    assert not hits["GA968"], watch.report


def _tiny(baseline=None, out=None, steps: int = 3, net=None, every: int = 1, held: bool = False):
    """A few steps of a small MLP in a PyNative loop; *held*: its first layer's weight in a group of learning rate 0."""
    ms.set_context(mode=ms.PYNATIVE_MODE)  # the loss is a lambda: PyNative only (conftest puts the mode back)
    ms.set_seed(0)
    net = net or nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2)])
    params = net.trainable_params()
    groups = [{"params": params[:1], "lr": 0.0}, {"params": params[1:]}] if held else params
    optimizer = nn.SGD(groups, 0.1)
    grad_fn = ms.value_and_grad(lambda a, b: nn.MSELoss()(net(a), b), None, optimizer.parameters)
    rng = np.random.default_rng(0)
    x, y = (
        Tensor(rng.normal(size=(8, 4)).astype(np.float32)),
        Tensor(rng.normal(size=(8, 2)).astype(np.float32)),
    )
    with graphaudit.watch(net, optimizer, every=every, fail_on="never", baseline=baseline, out=out) as w:
        for _ in range(steps):
            loss, grads = grad_fn(x, y)
            optimizer(grads)
            w.step(loss=loss, grads=grads)
    return net, optimizer, w


def test_without_a_baseline_the_checks_are_not_run_and_say_why():
    _, _, w = _tiny()
    for check in NEW:
        assert "no baseline= given" in w.report.skipped[check]


def test_the_header_names_the_network_and_an_old_header_still_reads(tmp_path):
    _tiny(out=tmp_path, steps=5)
    head = json.loads((tmp_path / "samples.jsonl").read_text().splitlines()[0])
    assert head["network"] == ["0.weight", "0.bias", "2.weight", "2.bias"] and head["sizes"] == [32, 8, 16, 2]
    lines = (tmp_path / "samples.jsonl").read_text().splitlines()
    old = {k: v for k, v in json.loads(lines[0]).items() if k not in ("network", "sizes")}
    (tmp_path / "old.jsonl").write_text("\n".join([json.dumps(old), *lines[1:]]))
    _, _, again = _tiny(baseline=tmp_path / "old.jsonl", steps=5)  # a file written before these keys
    assert set(NEW) <= set(again.report.checks_run), again.report.skipped
    assert not again.report.findings


def test_a_baseline_folder_a_record_and_audit_take_it(tmp_path):
    net, optimizer, w = _tiny(out=tmp_path, steps=5)
    _, _, by_folder = _tiny(baseline=tmp_path, steps=5, out=tmp_path / "again")
    assert 'class="baseline"' in (tmp_path / "again" / "dashboard.html").read_text()  # its loss, in grey
    _, _, by_record = _tiny(baseline=w.record, steps=5)
    for watched in (by_folder, by_record):
        assert "GA968" in watched.report.checks_run
    report = graphaudit.audit(net, optimizer=optimizer, watched=by_folder.record, baseline=tmp_path)
    assert "GA968" in report.checks_run and not report.by_check("GA968")


def test_a_layer_the_optimizer_holds_but_never_moves_is_one_finding_of_ga960_confirmed(tmp_path):
    _tiny(out=tmp_path, steps=6)
    _, _, w = _tiny(baseline=tmp_path, steps=6, held=True)
    (finding,) = w.report.by_check("GA968")
    assert finding.check_id == "GA960" and finding.confirmed_by == ("GA968",), w.report
    assert "0.weight never moved" in finding.message and finding.severity == "error"


def test_runs_sampled_at_other_steps_say_so(tmp_path):
    _tiny(out=tmp_path, steps=6)
    _, _, w = _tiny(baseline=tmp_path, steps=6, every=5)
    reason = w.report.skipped["GA967"]
    assert "2 steps were sampled in both runs, 3 are needed" in reason and "every=1" in reason, reason
    assert "GA966" in w.report.checks_run and "GA968" in w.report.checks_run


def test_a_baseline_of_another_network_names_its_parameters(tmp_path):
    _tiny(out=tmp_path)
    other = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 2), nn.ReLU(), nn.Dense(2, 2)])
    with pytest.raises(BaselineError, match=r"2 of this network's are not in it \(4.weight, 4.bias\)"):
        _tiny(baseline=tmp_path, net=other)
    wider = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 2)])
    with pytest.raises(BaselineError, match=r"0\.weight has 32 values there and 64 here"):
        _tiny(baseline=tmp_path, net=wider)


@pytest.mark.parametrize(
    ("text", "says"),
    [
        ("", "is empty"),
        ('{"kind": "step", "step": 1, "loss": 1.0}', "its first line is not the run header"),
        ('{"kind": "run", "parameters": ["0.weight"]}', "records no training steps"),
        ('{"kind": "run", "parameters": "0.weight"}', "its first line is not the run header"),
        (
            '{"kind": "run", "parameters": ["0.weight"]}\n{"kind": "step", "step": 1, "loss": 1.0}\n'
            '{"kind": "sample", "step": 1, "weight_norms": [1.0, 2.0], "update_norms": [0.1]}',
            "its line 3 (a sample) is not what a watch writes",
        ),
        (
            '{"kind": "run", "parameters": ["0.weight"]}\n{"kind": "step", "step": 1, "loss": "__import__"}',
            "line 2",
        ),
        ("<!DOCTYPE html><html></html>", "line 1 is not JSON"),
    ],
    ids=["empty", "no-header", "no-steps", "names-not-a-list", "sample-lengths", "loss-not-a-number", "html"],
)
def test_a_file_that_is_not_a_watchs_samples_is_refused(tmp_path, text, says):
    path = tmp_path / "samples.jsonl"
    path.write_text(text)
    with pytest.raises(BaselineError) as info:
        graphaudit.Watch(baseline=path)
    assert says in str(info.value)

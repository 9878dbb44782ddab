"""One runner policy: every entry point reports as [tool.graphaudit] says, folds and defers alike.

``audit``, ``audit_dataset``, ``run_probe`` and the training watch (``watch()``, ``Watch``) all
report through ``graphaudit.runner.judged``: the nearest ``pyproject.toml``'s table (or
``config=``) hides a finding into ``suppressed`` with the reason, for each of them.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import mindspore as ms
import numpy as np
import pytest
from mindspore import nn, ops

import graphaudit
from graphaudit.probe import run_probe
from graphaudit.runner.config import ENVIRONMENT, Config


@pytest.fixture(autouse=True)
def _no_named_config(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)


def ignoring(folder: Path, check_id: str) -> Path:
    """A project folder whose pyproject.toml ignores *check_id*."""
    text = f'[project]\nname = "mine"\n\n[tool.graphaudit]\nignore = ["{check_id}"]\n'
    (folder / "pyproject.toml").write_text(textwrap.dedent(text))
    return folder / "pyproject.toml"


def unshuffled():
    import mindspore.dataset as ds

    x = np.random.default_rng(0).normal(size=(64, 4)).astype(np.float32)
    return ds.NumpySlicesDataset({"x": x, "label": np.arange(64) % 2}, shuffle=False).batch(8)


def test_audit_dataset_reads_the_nearest_table(tmp_path, monkeypatch):
    assert graphaudit.audit_dataset(unshuffled(), num_classes=2, config=False).by_check("GA001")
    pyproject = ignoring(tmp_path, "GA001")
    monkeypatch.chdir(tmp_path)
    report = graphaudit.audit_dataset(unshuffled(), num_classes=2)
    assert not report.by_check("GA001")
    [hidden] = [s for s in report.suppressed if s.finding.check_id == "GA001"]
    assert hidden.reason == f'ignored by ignore = ["GA001"] in {pyproject} [tool.graphaudit]'
    quiet = graphaudit.audit_dataset(unshuffled(), num_classes=2, config=False, ignore=["GA001"])
    assert not quiet.by_check("GA001") and quiet.suppressed


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.body, self.head = nn.Dense(4, 8), nn.Dense(8, 2)

    def construct(self, x):
        return self.head(ops.relu(self.body(x)))


def test_run_probe_reads_the_configuration(pynative):
    net = Net()
    optimizer = nn.SGD(net.body.trainable_params(), 0.1)  # the head left out: GA905
    x, y = ms.Tensor(np.ones((4, 4), np.float32)), ms.Tensor(np.array([0, 1, 0, 1], np.int32))
    loss = nn.CrossEntropyLoss()
    assert run_probe(net, optimizer, loss, (x,), y, config=False).by_check("GA905")
    result = run_probe(net, optimizer, loss, (x,), y, config=Config(ignore=("GA905",), source="a test"))
    assert not result.by_check("GA905")
    assert [s.finding.check_id for s in result.suppressed] == ["GA905"]
    assert result.suppressed[0].reason == 'ignored by ignore = ["GA905"] in a test'
    assert isinstance(result, graphaudit.Report) and "GA905" in result.checks_run  # one result type


def nan_run(**options):
    """A functional loop whose loss becomes NaN at its 3rd step, watched: the watch's report."""
    net = Net()
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    with graphaudit.watch(net, optimizer, every=1, fail_on="never", **options) as w:
        for step in range(4):
            w.step(loss=float("nan") if step >= 2 else 1.0 / (step + 1))
    return w.session.report


@pytest.fixture
def pynative():
    ms.set_context(mode=ms.PYNATIVE_MODE)


def test_the_watch_reads_the_nearest_table(tmp_path, monkeypatch, pynative):
    assert nan_run(config=False).by_check("GA950")
    ignoring(tmp_path, "GA950")
    monkeypatch.chdir(tmp_path)
    report = nan_run()
    assert not report.by_check("GA950")
    assert [s.finding.check_id for s in report.suppressed] == ["GA950"]
    assert not graphaudit.Watch(config=False).session.config.ignore
    assert graphaudit.Watch().session.config.ignore == ("GA950",)


def test_a_config_of_the_wrong_type_is_an_error_naming_the_entry_point():
    with pytest.raises(graphaudit.GraphAuditError, match=r"audit_dataset\(\) expects config="):
        graphaudit.audit_dataset(unshuffled(), config=3)
    with pytest.raises(graphaudit.GraphAuditError, match=r"watch\(\) expects config="):
        graphaudit.Watch(config=3)


def test_compare_runs_ga801_through_the_same_policy():
    from graphaudit.fingerprint import compare, fingerprint

    def dense(seed):
        init = ms.Tensor(np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32))
        return nn.Dense(4, 2, weight_init=init, bias_init="zeros")

    ranks = [fingerprint(dense(0), rank=0, world_size=2), fingerprint(dense(1), rank=1, world_size=2)]
    [differs] = compare(ranks, config=False)
    assert differs.check_id == "GA801" and differs.cause.fields()["kind"] == "ParameterDiffersAcrossRanks"
    assert compare(ranks, config=Config(ignore=("GA801",), source="a test")) == []

"""A label the loss refuses is an error (GA060), and nothing made from it is listed as run (issue 19, pattern 2).

Before: a one-hot label given to a sparse cross-entropy, 5 labels for a batch of 8, an
``(8,)`` target for an ``(8, 3)`` MSE output: MindSpore raised inside the loss, graphaudit
said ``OK`` and listed GA050-GA054 and GA401-GA409 among the checks run. The second half
is the rule over every check: for each kind of evidence, when its producer fails, every
check that needs it (directly or through another kind) is NOT RUN with a reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.checks import all_checks
from graphaudit.cli import EXIT_FINDINGS, main
from graphaudit.evidence import EvidenceSet, Missing, all_kinds
from graphaudit.evidence.network import NetworkGraph
from graphaudit.runner import run_checks
from graphaudit.runner.request import build_request

RNG = np.random.default_rng(0)
X = Tensor(RNG.standard_normal((8, 4)).astype(np.float32))
ONE_HOT = Tensor(np.eye(3, dtype=np.float32)[RNG.integers(0, 3, 8)])
LOSS_READERS = {"GA051", "GA052", "GA053", "GA054", *(f"GA40{i}" for i in range(1, 10))}


def head(width: int = 3) -> nn.Cell:
    return nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, width)])


REFUSED: dict[str, tuple[Any, Any, str]] = {
    "one-hot-to-sparse-cross-entropy": (
        ONE_HOT,
        nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
        "the label holds float rows (one-hot or probabilities) where class indices are wanted",
    ),
    "5-labels-for-8-inputs": (
        Tensor(RNG.integers(0, 3, 5).astype(np.int32)),
        nn.CrossEntropyLoss(),
        "the label has 5 rows for a batch of 8",
    ),
    "(8,)-target-for-(8,3)-mse": (
        Tensor(RNG.standard_normal(8).astype(np.float32)),
        nn.MSELoss(),
        "the label's shape (8,) is not the output's (8, 3)",
    ),
}


@pytest.mark.parametrize("case", sorted(REFUSED))
def test_a_label_the_loss_refuses_is_an_error_and_its_readers_are_not_run(case):
    label, loss_fn, words = REFUSED[case]
    net = head()
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), inputs=(X,), label=label, loss_fn=loss_fn)
    assert not report.ok
    (finding,) = report.by_check("GA060")
    assert finding.severity == "error" and finding.subject == "label"
    assert words in finding.message and "MindSpore raised" in finding.message
    assert type(loss_fn).__name__ + " takes" in finding.message
    assert not LOSS_READERS & set(report.checks_run), report.checks_run
    assert all(report.skipped[c] for c in LOSS_READERS), report.skipped


def test_a_label_the_loss_takes_is_not_reported():
    net = head()
    label = Tensor(RNG.integers(0, 3, 8).astype(np.int32))
    report = graphaudit.audit(
        net, nn.SGD(net.trainable_params()), inputs=(X,), label=label, loss_fn=nn.CrossEntropyLoss()
    )
    assert not report.by_check("GA060") and set(report.checks_run) >= LOSS_READERS


def test_the_cli_reports_a_refused_label(capsys, tmp_path):
    factory = tmp_path / "ga_refused_factory.py"
    factory.write_text(
        "from mindspore import nn\n\n\ndef with_loss():\n"
        "    net = nn.Dense(4, 2)\n    return net, nn.SGD(net.trainable_params()), nn.MSELoss()\n",
        encoding="utf-8",
    )
    code = main(["audit", f"{factory}:with_loss", "--input", "2x4", "--label", "5x6"])
    out, err = capsys.readouterr()
    assert code == EXIT_FINDINGS, out + err
    assert "GA060 loss-rejects-label" in out and "OK" not in out.splitlines()[0]


# -- over every check: a kind of evidence whose producer fails leaves its readers NOT RUN ------------


def _needs_closure(kind: type) -> set[type]:
    found = {kind}
    for need in kind.needs:
        found |= _needs_closure(need)
    return found


def _full_request() -> Any:
    net = head()
    label = Tensor(RNG.integers(0, 3, 8).astype(np.int32))
    return build_request(
        net,
        nn.SGD(net.trainable_params()),
        inputs=(X,),
        label=label,
        loss_fn=nn.CrossEntropyLoss(),
        spec=graphaudit.Spec(),
        mode="train",
        probe=0,
        options={},
    )


KINDS = [kind for kind in all_kinds() if kind is not NetworkGraph]  # without it there is no audit at all


@pytest.fixture(scope="module")
def captured() -> tuple[Any, NetworkGraph]:
    request = _full_request()
    return request, EvidenceSet(request).need(NetworkGraph)  # one capture for every kind


@pytest.mark.parametrize("kind", KINDS, ids=[k.__name__ for k in KINDS])
def test_every_check_needing_a_failed_kind_is_not_run_with_the_reason(kind, captured):
    request, network = captured
    reason = f"the producer of {kind.__name__} failed (made to fail by this test)"
    have = EvidenceSet(request, {NetworkGraph: network, kind: Missing(reason)})
    report = run_checks(have)
    readers = [c for c in all_checks().values() if any(kind in _needs_closure(n) for n in c.needs)]
    assert readers or kind.__module__.startswith("graphaudit."), kind
    not_run = {n.check_id: n for n in report.not_run}
    for check in readers:
        assert check.check_id not in report.checks_run, check.check_id
        assert not_run[check.check_id].reason, (check.check_id, not_run[check.check_id])


def test_the_probe_on_a_refused_label_is_not_run_with_the_reason():
    net = head()
    label, loss_fn, _ = REFUSED["5-labels-for-8-inputs"]
    report = graphaudit.audit(
        net, nn.SGD(net.trainable_params()), inputs=(X,), label=label, loss_fn=loss_fn, probe=True
    )
    assert [f.check_id for f in report.findings if f.severity == "error"] == ["GA060"]
    probe_checks = [n for n in report.not_run if n.check_id.startswith("GA90")]
    assert probe_checks and all("refused the label" in (n.reason or "") for n in probe_checks)

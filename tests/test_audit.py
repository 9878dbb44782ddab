"""audit(): wrappers, the report, no mutation, bad arguments, generated docs."""

from __future__ import annotations

import json
import random

import mindspore as ms
import networkx as nx
import numpy as np
import pytest
import twins
from docgen_module import _docgen
from mindspore import nn, ops
from nets import Repeated, TrainModeNet, tensor

import graphaudit
from graphaudit.checks import REQUIRED_DOC_SECTIONS, all_checks


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


def test_docs_checks_md_is_current():
    docgen = _docgen()
    DOC_PATH, CLI_DOC_PATH, checks_markdown, cli_markdown = (
        docgen.DOC_PATH,
        docgen.CLI_DOC_PATH,
        docgen.checks_markdown,
        docgen.cli_markdown,
    )
    assert DOC_PATH.read_text(encoding="utf-8") == checks_markdown(), "run: python scripts/docgen.py"
    cli = CLI_DOC_PATH.read_text(encoding="utf-8")
    assert cli == cli_markdown(cli), "run: python scripts/docgen.py"


def test_every_check_is_documented_and_named():
    for check_id, check in all_checks().items():
        assert check.check_id == check_id
        for section in REQUIRED_DOC_SECTIONS:
            assert section in check.doc, (check_id, section)
    names = [c.name for c in all_checks().values()]
    assert len(names) == len(set(names))


@pytest.mark.parametrize("wrap", ["with_loss", "train_one_step", "model"])
def test_optimizer_and_loss_are_found_inside_wrappers(wrap):
    net = Net()
    optimizer = nn.SGD(net.backbone.trainable_params())
    loss = nn.MSELoss()
    wrapped = {
        "with_loss": lambda: nn.WithLossCell(net, loss),
        "train_one_step": lambda: nn.TrainOneStepCell(nn.WithLossCell(net, loss), optimizer),
        "model": lambda: ms.train.Model(net, loss, optimizer),
    }[wrap]()
    report = graphaudit.audit(wrapped, optimizer if wrap == "with_loss" else None)
    assert report.network == "Net"
    assert [f.subject for f in report.by_check("GA201")] == ["head"]  # one cause, one finding
    assert sorted(s for f in report.by_check("GA201") for s in f.subjects) == ["head.bias", "head.weight"]
    assert not report.ok


def test_wrapper_inputs_end_with_the_label():
    net = Net()
    report = graphaudit.audit(nn.WithLossCell(net, nn.MSELoss()), inputs=(tensor(2, 4), tensor(2, 2)))
    assert report.graph.graph["traced"]
    assert report.graph.nodes["input:0"]["shape"] == "[2, 4]"
    with pytest.raises(graphaudit.InputError, match=r"inputs=\(x, y\)"):
        graphaudit.audit(nn.WithLossCell(net, nn.MSELoss()), inputs=tensor(2, 4))


def test_report_text_json_and_annotated_graph(tmp_path):
    report = graphaudit.audit(Repeated(), nn.SGD(Repeated().trainable_params()))
    assert [f.check_id for f in report.findings if f.severity == "error"][:1] == ["GA101"]
    data = json.loads(report.to_json())
    assert data["schema_version"] == 2 and data["ok"] is False
    assert data["findings"][0]["check_id"] == report.findings[0].check_id
    text = str(report)
    assert text.startswith("graphaudit report for Repeated: FAILED") and "ERRORS" in text
    graph = report.annotated()
    annotated = [n for n, d in graph.nodes(data=True) if "findings" in d]
    assert annotated and all(graph.nodes[n]["severity"] in ("error", "warning", "info") for n in annotated)
    assert not any("findings" in d for _, d in report.graph.nodes(data=True))  # the capture's, as it was
    nx.write_graphml(graph, tmp_path / "report.graphml")


_FINDINGS_OF_A_RUN = """
import json, sys
sys.path.insert(0, sys.argv[1])
import numpy as np
from mindspore import Tensor, nn
import graphaudit
from nets import Repeated
net, other = Repeated(), Repeated()
report = graphaudit.audit(net, nn.SGD(other.trainable_params()), inputs=Tensor(np.ones((1, 4), np.float32)))
print(json.dumps([f.to_dict() for f in report.findings] + [[n.check_id for n in report.not_run]]))
"""


def test_findings_are_the_same_in_every_process_whatever_the_hash_seed():
    """Two processes, two string-hash seeds: a set or dict order leaking into a report shows here."""
    first, second = (
        twins.start("-c", _FINDINGS_OF_A_RUN, twins.TESTS, hash_seed=seed) for seed in ("1", "4242")
    )
    first, second = (json.loads(twins.finish(p).strip().splitlines()[-1]) for p in (first, second))
    assert len(first) > 2 and first == second  # GA101, GA202 (GA201 folded into it), the checks not run


def test_audit_changes_nothing_in_network_optimizer_or_globals():
    net = TrainModeNet().set_train(True)
    net.fc.bias.requires_grad = False
    optimizer = nn.Adam(net.trainable_params(), learning_rate=0.01, weight_decay=0.1)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)
    x, y = tensor(4, 4), tensor(4, 8)
    step(x, y)  # optimizer state (moments, step counter) is not at its initial value

    def state():
        return {
            "net": {p.name: (p.asnumpy().tobytes(), p.requires_grad) for p in net.get_parameters()},
            "optimizer": {p.name: p.asnumpy().tobytes() for p in optimizer.get_parameters()},
            "training": {n: c.training for n, c in step.cells_and_names()},
            "mode": ms.get_context("mode"),
        }

    before = state()
    ms.set_seed(3)
    np.random.seed(3)
    random.seed(3)
    draws = (
        ops.uniform((2,), ms.Tensor(0.0), ms.Tensor(1.0)).asnumpy().tobytes(),
        np.random.rand(),
        random.random(),
    )
    ms.set_seed(3)
    np.random.seed(3)
    random.seed(3)

    graphaudit.audit(step, inputs=(x, y))

    assert (
        ops.uniform((2,), ms.Tensor(0.0), ms.Tensor(1.0)).asnumpy().tobytes(),
        np.random.rand(),
        random.random(),
    ) == draws
    assert state() == before


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"optimizer": [1, 2]}, "expects a mindspore.nn.Optimizer"),
        ({"optimizer": nn.SGD}, r"Pass an instance"),
        ({"loss_fn": ops.mse_loss}, "expects a loss Cell"),
        ({"spec": {"frozen": []}}, r"Spec.load\(path\)"),
    ],
)
def test_bad_arguments_get_clear_errors(kwargs, message):
    with pytest.raises(graphaudit.GraphAuditError, match=message):
        graphaudit.audit(Net(), **kwargs)


def test_checks_whose_evidence_is_missing_are_reported_as_not_run_with_the_reason():
    report = graphaudit.audit(Net())
    needing = {i for i, c in all_checks().items() if c.needs_inputs or c.needs_probe}
    assert needing <= set(report.skipped)
    assert not set(report.skipped) & set(report.checks_run)
    assert {"GA101", "GA105", "GA204"} <= set(report.checks_run)  # they need the network only
    # no optimizer, loss or spec: those checks did not run either, and the report says what to pass
    assert {"GA201", "GA401", "GA103", "GA304"} <= set(report.skipped)
    assert "pass the optimizer" in report.skipped["GA201"]
    assert "loss_fn=" in report.skipped["GA401"] and "spec=" in report.skipped["GA103"]
    probe = next(n for n in report.not_run if n.check_id == "GA901")
    assert "probe=True" in probe.text() and "--probe" in probe.text("cli")
    assert "inputs=" not in report.skipped["GA901"].split("needs")[0]
    traced = graphaudit.audit(Net(), nn.SGD(Net().trainable_params()), inputs=tensor(1, 4))
    assert {"GA301", "GA302", "GA303", "GA703"} <= set(traced.checks_run)
    assert {"GA304", "GA401", "GA901"} <= set(traced.skipped)  # no spec, no loss, no probe


def test_probe_runs_one_step_and_its_findings_join_the_report():
    net = Net()
    optimizer = nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)
    report = graphaudit.audit(
        net, optimizer, loss_fn=nn.MSELoss(), inputs=tensor(2, 4), label=tensor(2, 2), probe=True
    )
    one_step = {
        i
        for i, c in all_checks().items()
        if c.needs_probe and all(k.__name__ != "ProbeCurve" for k in c.needs)
    }
    several = {i for i, c in all_checks().items() if c.needs_probe} - one_step
    assert one_step and not one_step & set(report.skipped)
    assert several <= set(report.skipped)  # they need probe=N, N >= 2
    # GA905 confirms GA201 about the same parameters: one finding, not two per parameter
    assert [(f.check_id, f.confirmed_by) for f in report.by_check("GA905")] == [("GA201", ("GA905",))]
    assert sorted(s for f in report.by_check("GA905") for s in f.subjects) == ["head.bias", "head.weight"]
    assert all(node in report.graph for f in report.by_check("GA905") for node in f.nodes)
    with pytest.raises(graphaudit.InputError, match=r"inputs=\(x, y\)"):
        graphaudit.audit(net, optimizer, loss_fn=nn.MSELoss(), probe=True)


def test_findings_name_the_attribute_path_first_and_the_parameter_name_when_it_differs():
    class Stages(nn.Cell):
        def __init__(self):
            super().__init__()
            self.stages = nn.CellList([nn.Dense(4, 4) for _ in range(2)])
            self.head = nn.Dense(4, 2, weight_init="zeros")

        def construct(self, x):
            for stage in self.stages:
                x = stage(x)
            return self.head(x)

    net = Stages()
    net.stages[1].weight.name = "legacy.block1.weight"  # the name a checkpoint uses, not the path
    optimizer = nn.SGD([*net.stages[0].trainable_params(), *net.head.trainable_params(), net.stages[1].bias])
    report = graphaudit.audit(net, optimizer)
    (left_out,) = report.by_check("GA201")
    assert left_out.subject == "stages.1.weight"
    assert f"Parameter name {net.stages[1].weight.name!r}" in left_out.message
    assert report.about("stages.1.weight") and not report.about(net.stages[1].weight.name)


def test_the_evidence_options_keep_one_order_whatever_was_imported_first():
    """`graphaudit audit --help` and docs/cli.md list them in one order, not in import order."""
    script = (
        "import importlib, sys\n"
        "for name in sys.argv[1:]: importlib.import_module(name)\n"
        "from graphaudit.evidence import all_options\n"
        "print(list(all_options()))\n"
    )
    first = ["graphaudit.evidence.schedule", "graphaudit.evidence.ranks", "graphaudit.evidence.checkpoint"]

    def order(*modules: str) -> str:
        return twins.finish(twins.start("-c", script, *modules)).strip()

    assert order(*first) == order(*reversed(first)) == order()

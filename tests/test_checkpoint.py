"""checkpoint=: the load planned with MindSpore's own rules, checked against the real load_param_into_net.

Every checkpoint here is real: saved with ``ms.save_checkpoint`` into a temporary folder,
from the same network, from a part of it, from another width, from a wrapper (a prefix more),
then renamed or truncated. For each, the plan (:func:`plan_load`) must say exactly what
``mindspore.load_param_into_net`` does on a fresh copy of the network: which parameters it
leaves out, and whether it raises. The audited network itself is never loaded into.
"""

from __future__ import annotations

import os

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.capture.checkpoint import plan_load, read_entries, suggest_prefix


class Backbone(nn.Cell):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3)
        self.bn = nn.BatchNorm2d(width)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def construct(self, x):
        return self.pool(self.bn(self.conv(x))).reshape(x.shape[0], -1)


class Classifier(nn.Cell):
    def __init__(self, width: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.backbone = Backbone(width)
        self.head = nn.Dense(width, classes)

    def construct(self, x):
        return self.head(self.backbone(x))


X = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))


@pytest.fixture
def folder(tmp_path):
    return tmp_path


def save(cell: nn.Cell, folder, name: str) -> str:
    path = os.path.join(folder, name)
    ms.save_checkpoint(cell, path)
    return path


def checkpoints(folder) -> dict[str, object]:
    same = save(Classifier(), folder, "same.ckpt")
    trained = Classifier()
    step = nn.TrainOneStepCell(
        nn.WithLossCell(trained, nn.CrossEntropyLoss()), nn.Momentum(trained.trainable_params(), 0.1, 0.9)
    )
    truncated = ms.load_checkpoint(same)
    del truncated["backbone.bn.moving_mean"], truncated["head.bias"]
    backbone = save(Backbone(), folder, "backbone.ckpt")
    return {
        "same": same,
        "training state": save(step, folder, "train.ckpt"),
        "truncated": truncated,
        "backbone alone": backbone,
        "backbone renamed": {"backbone." + k: v for k, v in ms.load_checkpoint(backbone).items()},
        "wrapper prefix": save(nn.SequentialCell([Classifier()]), folder, "wrapped.ckpt"),
        "other width": save(Classifier(width=16), folder, "wide.ckpt"),
        "other classes": save(Classifier(classes=1000), folder, "imagenet.ckpt"),
        "float16": {k: Tensor(v.asnumpy().astype(np.float16)) for k, v in ms.load_checkpoint(same).items()},
    }


def real_load(checkpoint: object, strict: bool) -> tuple[list[str] | None, bool]:
    """What MindSpore does on a fresh network: the parameters it does not load, whether it raises."""
    net = Classifier()
    params = ms.load_checkpoint(checkpoint) if isinstance(checkpoint, str) else checkpoint
    params = {k: v if isinstance(v, ms.Parameter) else ms.Parameter(v, name=k) for k, v in params.items()}
    try:
        not_loaded, _ = ms.load_param_into_net(net, params, strict_load=strict)
    except RuntimeError:
        return None, True
    return sorted(not_loaded), False


@pytest.mark.parametrize("strict", [False, True])
def test_the_plan_is_what_load_param_into_net_does(folder, strict):
    for name, checkpoint in checkpoints(folder).items():
        plan = plan_load(Classifier(), read_entries(checkpoint), strict)
        not_loaded, raises = real_load(checkpoint, strict)
        assert bool(plan.mismatched) == raises, (name, plan.mismatched)
        if not raises:
            assert sorted(plan.not_loaded) == not_loaded, name


def test_the_prefix_rule_loads_a_wrapper_checkpoint_only_without_strict_load(folder):
    entries = read_entries(save(nn.SequentialCell([Classifier()]), folder, "wrapped.ckpt"))
    loose = plan_load(Classifier(), entries, strict_load=False)
    assert loose.not_loaded == [] and loose.prefixed["head.weight"] == "0.head.weight"
    assert plan_load(Classifier(), entries, strict_load=True).not_loaded != []


def test_suggest_prefix_finds_the_missing_and_the_extra_prefix():
    assert suggest_prefix(["backbone.conv.weight"], ["conv.weight", "other"]) == (
        "add",
        "backbone.",
        ["conv.weight"],
    )
    assert suggest_prefix(["conv.weight"], ["net.conv.weight"]) == ("strip", "net.", ["net.conv.weight"])
    assert suggest_prefix(["conv.weight"], ["fc.bias"]) is None


def findings(report, *ids):
    return {(f.check_id, f.severity, f.subject) for f in report.findings if f.check_id in ids}


def test_audit_reports_each_checkpoint_mistake_and_loads_nothing(folder):
    made = checkpoints(folder)
    net = Classifier()
    before = {p.name: p.asnumpy().tobytes() for p in net.get_parameters()}
    cases = {
        "same": set(),
        "training state": set(),
        "truncated": {("GA604", "error", "backbone.bn.moving_mean"), ("GA604", "error", "head.bias")},
        "backbone alone": {
            ("GA604", "error", "backbone"),
            ("GA604", "error", "head"),
            ("GA605", "warning", "(root)"),
        },
        "wrapper prefix": set(),
        "other width": {("GA606", "error", "backbone"), ("GA606", "error", "head.weight")},
        "other classes": {("GA606", "error", "head")},
        "float16": set(),  # converted on load with strict_load=False
    }
    for name, expected in cases.items():
        report = graphaudit.audit(net, inputs=X, checkpoint=made[name])
        assert findings(report, "GA604", "GA605", "GA606") == expected, name
    assert {p.name: p.asnumpy().tobytes() for p in net.get_parameters()} == before


def test_a_declared_new_head_is_info_and_strict_load_refuses_float16(folder):
    made = checkpoints(folder)
    net = Classifier()
    fine_tune = graphaudit.audit(
        net, inputs=X, checkpoint=made["backbone renamed"], new_parameters=["head.*"]
    )
    assert findings(fine_tune, "GA604", "GA605", "GA606") == {("GA604", "info", "head")}
    assert fine_tune.ok
    replaced = graphaudit.audit(net, inputs=X, checkpoint=made["other classes"], new_parameters="head.*")
    assert findings(replaced, "GA606") == {("GA606", "info", "head")}
    strict = graphaudit.audit(net, inputs=X, checkpoint=made["float16"], strict_load=True)
    assert ("GA606", "error", "backbone") in findings(strict, "GA606")


def test_without_checkpoint_the_checks_say_what_to_pass():
    report = graphaudit.audit(Classifier())
    reason = {n.check_id: n for n in report.not_run}["GA604"]
    assert "checkpoint=" in reason.python and "--checkpoint" in reason.cli


def test_a_bad_checkpoint_argument_is_an_error_that_says_what_to_pass(folder):
    with pytest.raises(graphaudit.GraphAuditError, match="not a file"):
        graphaudit.audit(Classifier(), checkpoint=os.path.join(folder, "missing.ckpt"))
    with pytest.raises(TypeError, match="checkpoint="):
        graphaudit.audit(Classifier(), checkpoint=42)

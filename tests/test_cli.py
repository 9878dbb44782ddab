"""The ``graphaudit`` command line: every command, format and exit code.

The CLI runs in-process (``main(argv)`` returns the exit code) on small networks defined in a
factory file written to ``tmp_path``, on the bundled samples, and once as a subprocess via
``python -m graphaudit``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import twins
from sample_audits import SAMPLES, audited

import graphaudit
from graphaudit.checks import all_checks
from graphaudit.cli import EXIT_CLEAN, EXIT_FINDINGS, EXIT_FORWARD, EXIT_INTERNAL, EXIT_USAGE, main
from graphaudit.cli.targets import random_tensors
from graphaudit.spec import Spec

ROOT = Path(__file__).resolve().parent.parent
REPORT_SCHEMA = ROOT / "graphaudit" / "report" / "schema" / "report.schema.json"
CHECKS = all_checks()

FACTORIES = '''
"""Small networks for the graphaudit command-line tests."""

import numpy as np
from mindspore import Tensor, nn, ops


class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(ops.relu(self.backbone(x)))


class HeadTwice(Net):
    def construct(self, x):
        h = ops.relu(self.backbone(x))
        return self.head(h) + self.head(h)


class WithSpare(Net):
    def __init__(self):
        super().__init__()
        self.spare = nn.Dense(4, 4)  # never called: GA301, a warning


class SigmoidNet(Net):
    def construct(self, x):
        return ops.sigmoid(self.head(ops.relu(self.backbone(x))))


def clean():
    net = Net()
    return net, nn.SGD(net.trainable_params())


def missing_head():
    net = Net()
    return {"net": net, "optimizer": nn.SGD(net.backbone.trainable_params())}


def spare():
    net = WithSpare()
    return net, nn.SGD(net.trainable_params())


def head_twice():
    net = HeadTwice()
    return net, nn.SGD(net.trainable_params())


def with_inputs():
    net = Net()
    x = Tensor(np.ones((2, 4), np.float32))
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "inputs": x}


def with_loss():
    net = Net()
    return net, nn.SGD(net.trainable_params()), nn.MSELoss()


def sigmoid_bce():
    net = SigmoidNet()
    return net, nn.SGD(net.trainable_params()), nn.BCEWithLogitsLoss()


def train_step():
    net = Net()
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    return nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), optimizer)


def full_optimizer(net):
    return nn.Momentum(net.trainable_params(), 0.01, 0.9)


def backbone_optimizer(net):
    return nn.SGD(net.backbone.trainable_params())


def missing_head_with_loss():
    net = Net()
    return net, nn.Momentum(net.backbone.trainable_params(), 0.1, 0.9), nn.MSELoss()


def train_step_with_inputs():
    net = Net()
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.MSELoss()), nn.SGD(net.trainable_params()))
    return {"net": step, "inputs": (Tensor(np.ones((2, 4), np.float32)), Tensor(np.ones((2, 2), np.float32)))}


def _fixed(seed, shape):
    return Tensor(np.random.default_rng(seed).normal(size=shape).astype(np.float32))


class Seeded(nn.Cell):
    """The same weights every time it is built (for fingerprints across ranks)."""

    def __init__(self, head_seed=1):
        super().__init__()
        self.backbone = nn.Dense(4, 8, weight_init=_fixed(0, (8, 4)), bias_init="zeros")
        self.head = nn.Dense(8, 2, weight_init=_fixed(head_seed, (2, 8)), bias_init="zeros")

    def construct(self, x):
        return self.head(self.backbone(x))


def seeded():
    net = Seeded()
    return net, nn.SGD(net.trainable_params())


def repeated():
    block = nn.Dense(4, 4)
    return nn.SequentialCell([block, block])  # GA101 in MindSpore's own classes: no line of ours assigns it


def tiny_dataset():
    return [[1.0, 2.0]]


DATASET_OBJECT = {"batches": 2}


def broken():
    raise RuntimeError("boom while building")


def needs_argument(width):
    return nn.Dense(width, 2)


def not_a_net():
    return 42


def bad_dict():
    return {"net": Net(), "optimiser": None}


def returns_class():
    return Net


def too_many():
    return Net(), None, None, None


NET_OBJECT = Net()
'''


@pytest.fixture(autouse=True)
def _isolate_imports():
    """Undo what importing factory files does to sys.path and sys.modules."""
    path = list(sys.path)
    before = set(sys.modules)
    yield
    sys.path[:] = path
    for name in set(sys.modules) - before:
        if name.startswith(("_graphaudit_target_", "ga_cli_")):
            del sys.modules[name]


@pytest.fixture
def factories(tmp_path) -> Path:
    path = tmp_path / "ga_cli_factories.py"
    path.write_text(FACTORIES, encoding="utf-8")
    return path


def run(capsys, *argv: str) -> tuple[int, str, str]:
    code = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture(scope="module")
def report_validator():
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(REPORT_SCHEMA.read_text(encoding="utf-8"))
    jsonschema.Draft202012Validator.check_schema(schema)
    return jsonschema.Draft202012Validator(schema)


def assert_valid_report(validator, data) -> None:
    errors = sorted(validator.iter_errors(data), key=lambda e: list(e.absolute_path))
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors)


# --------------------------------------------------------------------------- audit: exit codes


def test_clean_network_exits_0_with_a_text_report(capsys, factories):
    code, out, err = run(capsys, "audit", f"{factories}:clean", "--input", "2x4")
    assert code == EXIT_CLEAN, err
    assert out.startswith("graphaudit report for Net: OK")


def test_errors_exit_1_and_name_the_subject(capsys, factories):
    code, out, _ = run(capsys, "audit", f"{factories}:missing_head", "--input", "2x4")
    assert code == EXIT_FINDINGS
    assert (
        "FAILED" in out
        and "GA201 trainable-not-in-optimizer  head\n" in out
        and "(head.weight and head.bias)" in out
        and "subjects:" not in out  # named once, in the message
    )


@pytest.mark.parametrize(
    ("factory", "fail_on", "expected"),
    [
        ("spare", "error", EXIT_CLEAN),  # a warning only
        ("spare", "warning", EXIT_FINDINGS),
        ("spare", "never", EXIT_CLEAN),
        ("missing_head", "never", EXIT_CLEAN),
        ("missing_head", "warning", EXIT_FINDINGS),
        ("clean", "warning", EXIT_CLEAN),
    ],
)
def test_fail_on_sets_the_threshold(capsys, factories, factory, fail_on, expected):
    code, out, _ = run(capsys, "audit", f"{factories}:{factory}", "--input", "2x4", "--fail-on", fail_on)
    assert code == expected, out


def test_spare_cell_is_a_warning(capsys, factories):
    _, out, _ = run(capsys, "audit", f"{factories}:spare", "--input", "2x4", "--format", "json")
    data = json.loads(out)
    assert [(f["check_id"], f["severity"], f["subject"]) for f in data["findings"]] == [
        ("GA301", "warning", "spare")
    ]


def test_forward_failure_exits_3_without_traceback(capsys, factories):
    code, out, err = run(capsys, "audit", f"{factories}:clean", "--input", "2x5")
    assert code == EXIT_FORWARD
    assert out == ""
    assert "graphaudit: error: the network failed to run" in err and "'backbone'" in err
    assert "Traceback" not in err


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["{f}:nope", "--input", "2x4"], "has no attribute 'nope'; it defines HeadTwice, "),
        (["{f}", "--input", "2x4"], "is not MODULE:FACTORY"),
        (["{d}/missing.py:build"], "no such Python file"),
        (["no_such_module_for_graphaudit:build"], "cannot import module 'no_such_module_for_graphaudit'"),
        (["{f}:clean", "--input", "2y4"], "bad tensor shape '2y4'"),
        (["{f}:clean", "--input", "2x0"], "dimension '0' is not a positive integer"),
        (["{f}:clean", "--input", "2x4:complex7"], "bad tensor dtype 'complex7'"),
        (["{f}:clean", "--format", "xml"], "invalid choice: 'xml'"),
        (["{f}:broken"], "calling {f}:broken raised RuntimeError: boom while building"),
        (["{f}:needs_argument"], "missing a required argument: 'width'"),
        (["{f}:not_a_net"], "gave an object of type int, not a network"),
        (
            ["{f}:bad_dict"],
            "unknown keys ['optimiser']; the keys allowed are 'net' (required) and 'optimizer'",
        ),
        (["{f}:clean", "--mode", "test"], "invalid choice: 'test'"),
        (["{f}:too_many"], "returned a tuple of 4 values"),
        (["{f}:returns_class"], "gave the class Net, not a network: return an instance"),
        (["{f}:clean", "--input", "2x4", "--label", "2x2"], "--label needs a loss"),
        (["{f}:with_loss", "--label", "2x2"], "--label needs the data inputs too"),
        (["{f}:train_step", "--input", "2x4"], "so `inputs` must be (data..., label)"),
        (["{f}:clean", "--spec", "{d}/absent.toml"], "cannot read the spec file"),
        (["{f}:clean", "--spec", "{d}/typo.toml"], "typo.toml:1: unknown key 'parameter'"),
        (["{f}:clean", "--optimizer", "{f}:nope"], "has no attribute 'nope'"),
        (["{f}:clean", "--optimizer", "{f}:not_a_net"], "--optimizer {f}:not_a_net cannot be called with 1"),
    ],
)
def test_bad_input_exits_2_with_a_message_and_no_traceback(capsys, factories, args, message):
    (factories.parent / "typo.toml").write_text("[parameter]\nfrozen = []\n", encoding="utf-8")
    fill = {"f": str(factories), "d": str(factories.parent)}
    code, out, err = run(capsys, "audit", *(a.format(**fill) for a in args))
    assert code == EXIT_USAGE, err
    assert message.format(**fill) in err
    assert "Traceback" not in err
    assert out == ""


def test_a_bug_in_graphaudit_exits_4_with_the_traceback(capsys, factories, monkeypatch):
    def explode(*args, **kwargs):
        raise RuntimeError("internal bug")

    monkeypatch.setattr(graphaudit, "audit", explode)
    code, _, err = run(capsys, "audit", f"{factories}:clean")
    assert code == EXIT_INTERNAL
    assert "Traceback" in err and "internal bug" in err and "this is a bug in graphaudit" in err


# --------------------------------------------------------------------------- audit: what it builds


def test_module_name_factory_and_cell_object(capsys, factories, monkeypatch):
    monkeypatch.chdir(factories.parent)
    code, out, err = run(capsys, "audit", "ga_cli_factories:missing_head", "--input", "2x4")
    assert "head.weight" in out
    assert code == EXIT_FINDINGS, err
    code, _, err = run(capsys, "audit", "ga_cli_factories:NET_OBJECT", "--input", "2x4")
    assert code == EXIT_CLEAN, err  # a network object, no optimizer: nothing to compare
    code, _, err = run(capsys, "audit", "ga_cli_factories.py:Net", "--input", "2x4")  # a class
    assert code == EXIT_CLEAN, err


def test_mode_is_passed_to_audit(capsys, factories, monkeypatch):
    seen = {}
    real = graphaudit.audit

    def spy(*args, **kwargs):
        seen.update(kwargs)
        return real(*args, **kwargs)

    monkeypatch.setattr(graphaudit, "audit", spy)
    code, _, err = run(capsys, "audit", f"{factories}:clean", "--input", "2x4", "--mode", "eval")
    assert code == EXIT_CLEAN, err
    assert seen["mode"] == "eval"


def test_optimizer_factory_replaces_the_factorys_optimizer(capsys, factories):
    code, _, _ = run(
        capsys, "audit", f"{factories}:missing_head", "--optimizer", f"{factories}:full_optimizer"
    )
    assert code == EXIT_CLEAN
    code, out, _ = run(
        capsys, "audit", f"{factories}:clean", "--optimizer", f"{factories}:backbone_optimizer"
    )
    assert code == EXIT_FINDINGS and "head.weight" in out


def test_inputs_from_the_factory_enable_the_traced_checks(capsys, factories):
    code, out, _ = run(capsys, "audit", f"{factories}:with_inputs", "--format", "json")
    assert code == EXIT_CLEAN
    data = json.loads(out)
    # what still does not run needs more than a batch: a spec, a loss, a label, a probe...
    assert data["not_run"] and not [n for n in data["not_run"] if n["needs"] == "a traced forward pass"]
    assert all(n["reason"] is None for n in data["not_run"])
    assert "GA301" in data["checks_run"]
    assert all(n["cli"] and n["python"] for n in data["not_run"])
    code, out, _ = run(capsys, "audit", f"{factories}:clean", "--format", "json")
    assert "GA301" in json.loads(out)["skipped"]  # no inputs: the traced checks are skipped


@pytest.mark.parametrize("factory", ["train_step", "with_loss"])
def test_label_goes_to_the_loss(capsys, factories, factory):
    code, out, err = run(capsys, "audit", f"{factories}:{factory}", "--input", "2x4", "--label", "2x2")
    assert code == EXIT_CLEAN, out + err


def test_sigmoid_before_bce_with_logits_is_found_through_the_label(capsys, factories):
    code, out, _ = run(capsys, "audit", f"{factories}:sigmoid_bce", "--input", "2x4", "--label", "2x2")
    assert code == EXIT_FINDINGS
    assert "GA401 sigmoid-before-bce-with-logits" in out


def _spy_on_audit(monkeypatch, drop: tuple[str, ...] = ()) -> dict:
    """Record the arguments the CLI gives graphaudit.audit (passing on all but *drop*)."""
    seen: dict = {}
    real = graphaudit.audit

    def spy(net, *args, **kwargs):
        seen.update(kwargs, net=net)
        return real(net, *args, **{k: v for k, v in kwargs.items() if k not in drop})

    monkeypatch.setattr(graphaudit, "audit", spy)
    return seen


def test_label_of_a_plain_network_is_passed_as_label(capsys, factories, monkeypatch):
    seen = _spy_on_audit(monkeypatch)
    code, out, _ = run(capsys, "audit", f"{factories}:sigmoid_bce", "--input", "2x4", "--label", "2x2")
    assert code == EXIT_FINDINGS and "GA401" in out
    assert type(seen["net"]).__name__ == "SigmoidNet"  # not wrapped in a WithLossCell
    assert type(seen["loss_fn"]).__name__ == "BCEWithLogitsLoss"
    assert [tuple(x.shape) for x in seen["inputs"]] == [(2, 4)] and tuple(seen["label"].shape) == (2, 2)


def test_label_replaces_the_label_ending_a_wrappers_inputs(capsys, factories, monkeypatch):
    seen = _spy_on_audit(monkeypatch)
    code, out, err = run(capsys, "audit", f"{factories}:train_step_with_inputs", "--label", "2x2:float32")
    assert code == EXIT_CLEAN, out + err
    assert type(seen["net"]).__name__ == "TrainOneStepCell"
    assert [tuple(x.shape) for x in seen["inputs"]] == [(2, 4)]
    assert seen["label"].asnumpy().max() < 1  # the random --label, not the factory's ones
    code, out, err = run(capsys, "audit", f"{factories}:train_step_with_inputs", "--format", "json")
    assert code == EXIT_CLEAN, err  # without --label, the factory's inputs end with its label
    assert "GA401" in json.loads(out)["checks_run"]


def test_probe_runs_one_training_step_and_confirms_the_static_finding(capsys, factories):
    probe = {
        i for i, c in CHECKS.items() if c.needs_probe and all(k.__name__ != "ProbeCurve" for k in c.needs)
    }  # --probe is one step; the checks of several steps need --probe N
    code, out, err = run(
        capsys, "audit", f"{factories}:with_loss", "--input", "2x4", "--label", "2x2", "--probe"
    )
    assert code == EXIT_CLEAN, out + err
    code, out, err = run(
        capsys,
        "audit",
        f"{factories}:with_loss",
        "--input",
        "2x4",
        "--label",
        "2x2",
        "--probe",
        "--format",
        "json",
    )
    assert probe and probe <= set(json.loads(out)["checks_run"])
    argv = [
        "audit",
        f"{factories}:missing_head_with_loss",
        "--input",
        "2x4",
        "--label",
        "2x2",
        "--format",
        "json",
    ]
    code, out, err = run(capsys, *argv, "--probe")
    assert code == EXIT_FINDINGS, err
    (ga201,) = [f for f in json.loads(out)["findings"] if f["check_id"] == "GA201"]
    assert ga201["confirmed_by"] == ["GA905"]
    code, out, _ = run(
        capsys, *argv
    )  # without --probe: the probe checks are not run, and say how to run them
    assert probe <= {n["check_id"] for n in json.loads(out)["not_run"]}
    assert all("--probe" in n["cli"] for n in json.loads(out)["not_run"] if n["check_id"] in probe)


def test_probe_n_runs_several_steps_and_refuses_what_is_not_a_count(capsys, factories):
    several = {i for i, c in CHECKS.items() if any(k.__name__ == "ProbeCurve" for k in c.needs)}
    argv = ["audit", f"{factories}:with_loss", "--input", "2x4", "--label", "2x2", "--format", "json"]
    code, out, err = run(capsys, *argv, "--probe", "3")
    assert code == EXIT_CLEAN, out + err
    assert several and several <= set(json.loads(out)["checks_run"])
    code, out, _ = run(capsys, *argv, "--probe")  # one step: the curve checks say how to get several
    assert several <= {n["check_id"] for n in json.loads(out)["not_run"]}
    assert all("--probe 5" in n["cli"] for n in json.loads(out)["not_run"] if n["check_id"] in several)
    for bad in ("zero", "0"):
        code, _, err = run(capsys, *argv, "--probe", bad)
        assert code == EXIT_USAGE and "--probe takes" in err


def test_text_report_words_the_checks_not_run_for_the_command_line(capsys, factories):
    from graphaudit.evidence.ranks import RankFingerprints
    from graphaudit.evidence.trace import TracedPass

    code, out, _ = run(capsys, "audit", f"{factories}:clean")
    assert code == EXIT_CLEAN
    assert out.splitlines()[-1].startswith("NOT RUN: ") and "--show-not-run" in out.splitlines()[-1]
    code, out, _ = run(capsys, "audit", f"{factories}:clean", "--show-not-run")
    not_run = out.split("\nNOT RUN\n", 1)[1]
    for kind in (RankFingerprints, TracedPass):
        assert kind.requirement.cli in not_run
        assert kind.requirement.python not in not_run
    assert "inputs=(" not in not_run and "peers=[" not in not_run


def _fingerprint_file(factories, path, **kwargs) -> str:
    from graphaudit.cli.targets import resolve_reference
    from graphaudit.fingerprint import fingerprint

    net = resolve_reference(f"{factories}:Seeded")[0](**kwargs)
    fingerprint(net, rank=1, world_size=2).save(path)
    return str(path)


def test_peers_compare_the_audited_weights_with_other_ranks(capsys, factories, tmp_path):
    same = _fingerprint_file(factories, tmp_path / "same" / "rank1.json")
    other = _fingerprint_file(factories, tmp_path / "other" / "rank1.json", head_seed=2)

    code, out, err = run(capsys, "audit", f"{factories}:seeded", "--peers", same, "--format", "json")
    assert code == EXIT_CLEAN, err
    data = json.loads(out)
    assert "GA801" in data["checks_run"] and not [f for f in data["findings"] if f["check_id"] == "GA801"]

    code, out, err = run(capsys, "audit", f"{factories}:seeded", "--peers", other, "--format", "json")
    assert code == EXIT_FINDINGS, err
    ga801 = [f for f in json.loads(out)["findings"] if f["check_id"] == "GA801"]
    assert [(f["severity"], f["subject"]) for f in ga801] == [("error", "head.weight")]

    code, out, _ = run(capsys, "audit", f"{factories}:seeded", "--peers", other)
    assert code == EXIT_FINDINGS and "GA801 weights-differ-across-ranks  head.weight" in out


def test_without_peers_ga801_is_not_run_with_the_cli_wording(capsys, factories):
    from graphaudit.evidence.ranks import RankFingerprints

    code, out, _ = run(capsys, "audit", f"{factories}:seeded", "--format", "json")
    assert code == EXIT_CLEAN
    (ga801,) = [n for n in json.loads(out)["not_run"] if n["check_id"] == "GA801"]
    assert ga801["cli"] == RankFingerprints.requirement.cli and "--peers" in ga801["cli"]
    assert ga801["reason"] is None


def test_unreadable_peers_exit_2(capsys, factories, tmp_path):
    code, out, err = run(capsys, "audit", f"{factories}:seeded", "--peers", tmp_path / "absent.json")
    assert code == EXIT_USAGE and "cannot read the fingerprint file" in err and "Traceback" not in err
    assert out == ""


def test_every_declared_evidence_flag_is_an_audit_option(capsys):
    from graphaudit.evidence import all_options

    flags = [option.flag for _, option in all_options().values() if option.flag]
    assert "--peers" in flags
    code, out, _ = run(capsys, "audit", "--help")
    assert code == EXIT_CLEAN
    for flag in flags:
        assert f"{flag} " in out


class _FakeKind:
    title = "fake evidence"


def test_evidence_options_are_read_by_their_cli_value(capsys, factories, monkeypatch):
    from graphaudit import evidence
    from graphaudit.evidence import Option

    declared = {
        "dataset": Option(
            "dataset", "a dataset", flag="--dataset", metavar="MODULE:FACTORY", cli_value="reference"
        ),
        "strict": Option("strict", "be strict", flag="--strict", cli_value="flag"),
        "note": Option("note", "a note", flag="--note", cli_value="text"),
        "files": Option("files", "some files", flag="--files", metavar="FILE", cli_value="paths"),
        "hidden": Option("hidden", "Python only"),
    }
    monkeypatch.setattr(evidence, "all_options", lambda: {n: (_FakeKind, o) for n, o in declared.items()})
    seen = _spy_on_audit(monkeypatch, drop=tuple(declared))
    argv = ["audit", f"{factories}:clean", "--dataset", f"{factories}:tiny_dataset", "--strict"]
    code, _, err = run(capsys, *argv, "--note", "hello", "--files", "a.json", "b.json")
    assert code == EXIT_CLEAN, err
    assert seen["dataset"] == [[1.0, 2.0]]  # the factory, called
    assert seen["strict"] is True and seen["note"] == "hello" and seen["files"] == ["a.json", "b.json"]
    assert "hidden" not in seen

    seen.clear()
    code, _, err = run(capsys, "audit", f"{factories}:clean", "--dataset", f"{factories}:DATASET_OBJECT")
    assert code == EXIT_CLEAN, err
    assert seen["dataset"] == {"batches": 2}  # an object, used as it is
    assert not set(declared) - {"dataset"} & set(seen)  # what was not given is not passed

    code, _, err = run(capsys, "audit", f"{factories}:clean", "--dataset", f"{factories}:nope")
    assert code == EXIT_USAGE and "has no attribute 'nope'" in err
    code, _, err = run(capsys, "audit", f"{factories}:clean", "--dataset", f"{factories}:broken")
    assert code == EXIT_USAGE and "calling --dataset" in err and "boom while building" in err


def test_the_tour_sample_network(capsys):
    code, out, _ = run(
        capsys, "audit", SAMPLES / "tour.py:SampleNet", "--input", "2x3x16x16", "--format", "json"
    )
    assert code == EXIT_FINDINGS
    assert "GA101" in {f["check_id"] for f in json.loads(out)["findings"]}


def test_inputs_are_deterministic_and_seeded():
    def values(seed: int) -> list:
        return [t.asnumpy().tolist() for t in random_tensors([((2, 3), "float32"), ((4,), "int64")], seed)]

    assert values(0) == values(0)
    assert values(0) != values(1)
    floats, ints = values(0)
    assert all(0 <= v < 1 for row in floats for v in row) and set(ints) <= {0, 1}


# --------------------------------------------------------------------------- formats and outputs


def test_json_report_matches_the_schema_and_the_api(capsys, factories, report_validator, tmp_path):
    target = tmp_path / "out" / "report.json"
    code, out, err = run(
        capsys, "audit", f"{factories}:missing_head", "--input", "2x4", "--format", "json", "-o", target
    )
    assert code == EXIT_FINDINGS
    assert out == "" and f"wrote the json report to {target}" in err
    data = json.loads(target.read_text(encoding="utf-8"))
    assert_valid_report(report_validator, data)
    assert data["schema_version"] == 2 and data["ok"] is False and data["counts"]["error"] == 1
    assert [(f["subject"], f["subjects"]) for f in data["findings"]] == [
        ("head", ["head.weight", "head.bias"])
    ]


def test_report_schema_rejects_what_is_not_a_report(report_validator):
    good = {
        "schema_version": 2,
        "network": "Net",
        "unwrapped": [],
        "ok": True,
        "counts": {"error": 0, "warning": 0, "info": 0},
        "checks_run": ["GA101"],
        "skipped": {},
        "not_run": [],
        "findings": [],
    }
    assert_valid_report(report_validator, good)
    for bad in (
        {**good, "schema_version": 1},
        {**good, "not_run": [{"check_id": "GA301"}]},
        {**good, "ok": False},  # no error, so ok must be true
        {**good, "extra": 1},
        {**good, "checks_run": ["X1"]},
        {**good, "findings": [{"check_id": "GA101"}]},
    ):
        assert list(report_validator.iter_errors(bad)), bad


#: bad and good only: the also_<severity>.py samples are tests/test_samples_also.py's (run once, not per renderer)
SAMPLE_FILES = [p for p in sorted(SAMPLES.glob("GA*/*.py")) if p.stem in ("bad", "good")]


#: the command line on one sample of each family (its path is the same for every sample);
#: every sample's JSON is checked from its report, audited once per session (sample_audits)
CLI_SAMPLES = list({p.parent.name[:3] + p.stem: p for p in reversed(SAMPLE_FILES)}.values())[
    ::-1
]  # the first


@pytest.mark.parametrize("path", CLI_SAMPLES, ids=[f"{p.parent.name}-{p.stem}" for p in CLI_SAMPLES])
def test_the_command_line_audits_a_sample_of_each_family_to_its_json_report(capsys, report_validator, path):
    code, out, err = run(capsys, "audit", f"{path}:build", "--format", "json", "--fail-on", "never")
    assert code == EXIT_CLEAN, err
    data = json.loads(out)
    assert_valid_report(report_validator, data)
    expected = json.loads(audited(path.parent.name, path.stem).report.to_json())
    assert [(f["check_id"], f["subject"]) for f in data["findings"]] == [
        (f["check_id"], f["subject"]) for f in expected["findings"]
    ]


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=[f"{p.parent.name}-{p.stem}" for p in SAMPLE_FILES])
def test_every_sample_audits_to_a_valid_json_report(report_validator, path):
    data = json.loads(audited(path.parent.name, path.stem).report.to_json())
    assert_valid_report(report_validator, data)
    check_id = path.parent.name
    fired = {f["check_id"] for f in data["findings"] if f["severity"] != "info"}
    if path.stem == "bad":
        assert check_id in {i for f in data["findings"] for i in (f["check_id"], *f["confirmed_by"])}
    else:
        assert check_id not in fired


def _line_of(text: str) -> int:
    """The line of FACTORIES that holds *text*."""
    return next(i for i, line in enumerate(FACTORIES.splitlines(), 1) if text in line)


def test_sarif_report_points_at_the_line_that_builds_the_optimizer(capsys, factories, monkeypatch):
    monkeypatch.chdir(factories.parent)
    code, out, _ = run(capsys, "audit", "ga_cli_factories.py:missing_head", "--format", "sarif")
    assert code == EXIT_FINDINGS
    log = json.loads(out)
    assert log["version"] == "2.1.0"
    run_ = log["runs"][0]
    assert [r["id"] for r in run_["tool"]["driver"]["rules"]] == list(CHECKS)
    result = run_["results"][0]
    assert result["ruleId"] == "GA201" and result["level"] == "error"
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "ga_cli_factories.py"
    # GA201 is about what the optimizer holds: the line of missing_head() that builds it
    line = _line_of('return {"net": net, "optimizer": nn.SGD(net.backbone.trainable_params())}')
    assert physical["region"]["startLine"] == line
    assert line > FACTORIES.splitlines().index("def missing_head():") + 1  # not the def line any more
    assert result["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "head", "kind": "module"}]
    assert run_["artifacts"] == [{"location": {"uri": "ga_cli_factories.py"}, "roles": ["analysisTarget"]}]


def test_sarif_optimizer_from_the_optimizer_option_points_at_its_factory(capsys, factories, monkeypatch):
    monkeypatch.chdir(factories.parent)
    code, out, _ = run(
        capsys,
        "audit",
        "ga_cli_factories.py:clean",
        "--optimizer",
        "ga_cli_factories.py:backbone_optimizer",
        "--format",
        "sarif",
    )
    assert code == EXIT_FINDINGS
    result = json.loads(out)["runs"][0]["results"][0]
    assert result["ruleId"] == "GA201"
    region = result["locations"][0]["physicalLocation"]["region"]
    assert region["startLine"] == _line_of("return nn.SGD(net.backbone.trainable_params())")


def test_sarif_cell_finding_points_at_the_line_that_assigns_the_cell(capsys, factories, monkeypatch):
    monkeypatch.chdir(factories.parent)
    code, out, _ = run(
        capsys,
        "audit",
        "ga_cli_factories.py:spare",
        "--input",
        "2x4",
        "--format",
        "sarif",
        "--fail-on",
        "never",
    )
    assert code == EXIT_CLEAN
    (result,) = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "GA301"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical["artifactLocation"]["uri"] == "ga_cli_factories.py"
    assert physical["region"]["startLine"] == _line_of("self.spare = nn.Dense(4, 4)")


def test_sarif_falls_back_to_the_factory_line(capsys, factories, monkeypatch):
    """A cell that only MindSpore's classes hold has no line of the user's that assigns it: the
    finding points at the factory's line that builds the network (not its ``def`` line)."""
    monkeypatch.chdir(factories.parent)
    code, out, _ = run(capsys, "audit", "ga_cli_factories.py:repeated", "--format", "sarif")
    assert code == EXIT_FINDINGS, out
    (result,) = [r for r in json.loads(out)["runs"][0]["results"] if r["ruleId"] == "GA101"]
    physical = result["locations"][0]["physicalLocation"]
    assert physical == {
        "artifactLocation": {"uri": "ga_cli_factories.py"},
        "region": {"startLine": _line_of("return nn.SequentialCell([block, block])")},
    }


def test_sarif_artifact_outside_the_working_folder_is_a_file_uri(
    capsys, factories, monkeypatch, tmp_path_factory
):
    monkeypatch.chdir(tmp_path_factory.mktemp("elsewhere"))  # a working folder that does not hold the factory
    _, out, _ = run(capsys, "audit", f"{factories}:missing_head", "--format", "sarif")
    uri = json.loads(out)["runs"][0]["results"][0]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"
    ]
    assert uri == factories.resolve().as_uri()


def test_output_folder_that_cannot_be_made_exits_2(capsys, factories, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("x")
    code, _, err = run(capsys, "audit", f"{factories}:clean", "-o", blocker / "report.txt")
    assert code == EXIT_USAGE and "cannot write the text report" in err


# --------------------------------------------------------------------------- rendering


@pytest.mark.needs_dot
def test_audit_writes_svg_and_html(capsys, factories, tmp_path):
    svg, html = tmp_path / "r" / "report.svg", tmp_path / "r" / "report.html"
    code, _, err = run(
        capsys, "audit", f"{factories}:missing_head", "--input", "2x4", "--svg", svg, "--html", html
    )
    assert code == EXIT_FINDINGS, err
    assert svg.read_text().lstrip().startswith("<?xml") and "<svg" in svg.read_text()
    assert "<html" in html.read_text().lower() and "GA201" in html.read_text()


def test_render_writes_the_graph_without_audit(capsys, factories, tmp_path):
    out = tmp_path / "graph.dot"
    code, stdout, err = run(
        capsys, "render", f"{factories}:clean", "--input", "2x4", "-o", out, "--depth", "1"
    )
    assert code == EXIT_CLEAN, err
    assert stdout == "" and out.read_text().startswith("digraph")
    assert "GA" not in out.read_text()  # no audit, so no finding marked


@pytest.mark.needs_dot
def test_render_svg(capsys, factories, tmp_path):
    out = tmp_path / "graph.svg"
    code, _, err = run(capsys, "render", f"{factories}:clean", "--input", "2x4", "-o", out)
    assert code == EXIT_CLEAN, err
    assert "<svg" in out.read_text()


def test_render_needs_an_output(capsys, factories):
    code, _, err = run(capsys, "render", f"{factories}:clean")
    assert code == EXIT_USAGE and "--output" in err


def test_render_without_the_renderer_exits_2(capsys, factories, tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "graphaudit.report.render", None)  # as if drawing were missing
    code, _, err = run(capsys, "audit", f"{factories}:clean", "--svg", tmp_path / "x.svg")
    assert code == EXIT_USAGE and "rendering is not available" in err


def test_render_failure_exits_2(capsys, factories, tmp_path, monkeypatch):
    monkeypatch.setenv("GRAPHAUDIT_DOT", str(tmp_path / "no-dot-here"))
    code, _, err = run(capsys, "render", f"{factories}:clean", "-o", tmp_path / "graph.svg")
    assert code == EXIT_USAGE and "graphaudit: error:" in err and "Traceback" not in err


def test_render_refuses_a_suffix_that_names_no_format(capsys, factories, tmp_path):
    out = tmp_path / "r.txt"
    code, stdout, err = run(capsys, "render", f"{factories}:clean", "-o", out)
    assert code == EXIT_USAGE, err
    assert "cannot tell what to draw from the suffix '.txt'" in err and "--format" in err
    assert "Traceback" not in err and stdout == ""
    assert not out.exists()
    code, _, err = run(capsys, "render", f"{factories}:clean", "--format", "dot", "-o", out)
    assert code == EXIT_CLEAN, err
    assert out.read_text().startswith("digraph")


@pytest.mark.needs_dot
def test_render_format_svg_to_any_name(capsys, factories, tmp_path):
    out = tmp_path / "r.txt"
    code, _, err = run(capsys, "render", f"{factories}:clean", "--format", "svg", "-o", out)
    assert code == EXIT_CLEAN, err
    assert "<svg" in out.read_text()


def test_render_formats_are_the_drawing_formats():
    from graphaudit.cli.output import DRAWING_FORMATS
    from graphaudit.draw import FORMATS

    assert DRAWING_FORMATS == FORMATS


# --------------------------------------------------------------------------- checks


def test_checks_lists_every_check(capsys):
    code, out, _ = run(capsys, "checks")
    assert code == EXIT_CLEAN
    lines = out.splitlines()
    assert max(len(line) for line in lines) <= 100
    for check in CHECKS.values():
        at = next(i for i, line in enumerate(lines) if line.startswith(f"  {check.check_id} "))
        assert check.name in lines[at] and check.severity in lines[at]
        heading = next(line for line in reversed(lines[:at]) if not line.startswith(" "))
        assert heading.endswith(f": {check.family}")
    schedules = next(line for line in lines if "learning-rate schedules" in line)
    assert schedules.startswith("GA914-GA916:")  # their own family, not "probe steps"


def test_a_checks_page_says_what_to_pass_on_the_command_line(capsys):
    for check in CHECKS.values():
        code, out, _ = run(capsys, "checks", check.check_id)
        assert code == EXIT_CLEAN
        assert "--input" in out.splitlines()[1] or not check.needs_inputs


@pytest.mark.parametrize("key", ["GA201", "ga201", "trainable-not-in-optimizer"])
def test_checks_id_prints_the_full_doc(capsys, key):
    code, out, _ = run(capsys, "checks", key)
    assert code == EXIT_CLEAN
    assert out.startswith("GA201 trainable-not-in-optimizer\n")
    for section in ("What it does", "Why is this bad", "Example", "Use instead"):
        assert section in out


def test_checks_unknown_id_exits_2(capsys):
    code, _, err = run(capsys, "checks", "GA999")
    assert code == EXIT_USAGE and "no check 'GA999'" in err and "GA101" in err


# --------------------------------------------------------------------------- spec snapshot


def test_spec_snapshot_round_trip(capsys, factories, tmp_path):
    design = tmp_path / "specs" / "design.toml"
    code, _, err = run(capsys, "spec", "snapshot", f"{factories}:clean", "--input", "2x4", "-o", design)
    assert code == EXIT_CLEAN, err
    spec = Spec.load(design)
    assert spec.expected_connections == [("backbone", "head")] and spec.calls == {"backbone": 1, "head": 1}

    # the network it was taken from keeps its design...
    code, out, _ = run(
        capsys, "audit", f"{factories}:clean", "--input", "2x4", "--spec", design, "--fail-on", "warning"
    )
    assert code == EXIT_CLEAN, out
    # ...one that calls the head twice does not
    code, out, _ = run(
        capsys, "audit", f"{factories}:head_twice", "--input", "2x4", "--spec", design, "--fail-on", "warning"
    )
    assert code == EXIT_FINDINGS and "GA307" in out


def test_spec_snapshot_to_stdout_and_of_a_wrapper(capsys, factories):
    code, out, _ = run(capsys, "spec", "snapshot", f"{factories}:train_step", "--input", "2x4")
    assert code == EXIT_CLEAN
    assert Spec.from_toml(out).calls == {"backbone": 1, "head": 1}  # the backbone inside TrainOneStepCell


def test_spec_snapshot_bad_depth_exits_2(capsys, factories):
    code, _, err = run(capsys, "spec", "snapshot", f"{factories}:clean", "--input", "2x4", "--depth", "0")
    assert code == EXIT_USAGE and "depth >= 1" in err


# --------------------------------------------------------------------------- help


@pytest.mark.parametrize(
    "argv",
    [
        ["--help"],
        ["audit", "--help"],
        ["render", "--help"],
        ["checks", "--help"],
        ["spec", "--help"],
        ["spec", "snapshot", "--help"],
    ],
)
def test_help_everywhere(capsys, argv):
    code, out, _ = run(capsys, *argv)
    assert code == EXIT_CLEAN
    assert out.startswith(f"usage: graphaudit {' '.join(argv[:-1])}".rstrip())
    if argv[0] != "checks":
        assert "exit codes:" in out


def test_version_and_missing_command(capsys):
    code, out, _ = run(capsys, "--version")
    assert code == EXIT_CLEAN and out.strip() == f"graphaudit {graphaudit.__version__}"
    code, _, err = run(capsys, "spec")
    assert code == EXIT_USAGE and "required" in err
    code, _, err = run(capsys)
    assert code == EXIT_USAGE


# --------------------------------------------------------------------------- subprocess


def test_python_dash_m_graphaudit(factories, tmp_path):
    command = ["-m", "graphaudit", "audit", f"{factories}:missing_head", "--input", "2x4"]
    done = twins.run(*command, "--format", "json")
    assert done.returncode == EXIT_FINDINGS, done.stderr
    assert json.loads(done.stdout)["counts"]["error"] == 1
    assert "Exception ignored" not in done.stderr, done.stderr
    done = twins.run("-m", "graphaudit", "audit", f"{factories}:clean", "--input", "2x5")
    assert done.returncode == EXIT_FORWARD and "Traceback" not in done.stderr


def _last_line_of(code: str, *argv: str) -> str:
    done = twins.run("-c", code, *argv)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


_IMPORTS_MINDSPORE = (
    "import sys\nfrom graphaudit.cli import main\ncode = main(sys.argv[1:])\n"
    "print('exit', code, 'mindspore' in sys.modules)"
)


@pytest.mark.parametrize(
    "argv",
    [["--help"], ["--version"], ["checks"], ["checks", "GA201"], ["audit", "--help"], ["compare", "--help"]],
)
def test_light_commands_do_not_import_mindspore(argv):
    assert _last_line_of(_IMPORTS_MINDSPORE, *argv) == "exit 0 False"


def test_an_audit_does_import_mindspore(factories):
    """The control of the test above: the probe sees MindSpore when it is imported."""
    assert _last_line_of(_IMPORTS_MINDSPORE, "audit", f"{factories}:clean") == "exit 0 True"


PINNED = """
import json

from mindspore import nn


def build():
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    json._graphaudit_test_kept_alive = net  # a module imported before MindSpore keeps the network to the end
    return net, nn.SGD(net.trainable_params())
"""


def test_no_teardown_noise_from_mindspore_at_exit(tmp_path):
    """Cells alive at interpreter exit would print "Exception ignored in: <function Cell.__del__>"."""
    factory = tmp_path / "pinned.py"
    factory.write_text(PINNED, encoding="utf-8")
    console_script = "import json, sys\nfrom graphaudit.cli import main\nsys.exit(main())"
    for command in (
        ["-c", console_script, "audit", f"{factory}:build", "--input", "2x4"],
        ["-m", "graphaudit", "audit", f"{factory}:build", "--input", "2x4"],
        ["-m", "graphaudit", "render", f"{factory}:build", "-o", str(tmp_path / "g.dot")],
    ):
        done = twins.run(*command)
        assert done.returncode == EXIT_CLEAN, done.stderr
        assert "Exception ignored" not in done.stderr, done.stderr


@pytest.mark.parametrize(
    ("argv", "hint"),
    [
        (["audit", "pkg:factory", "--probe", "zero"], "graphaudit audit --help"),
        (["audit"], "graphaudit audit --help"),
        (["render", "pkg:factory"], "graphaudit render --help"),
        (["spec"], "graphaudit spec --help"),
        (["bogus"], "graphaudit --help"),
    ],
)
def test_a_usage_error_is_the_error_and_a_one_line_hint(capsys, argv, hint):
    code, out, err = run(capsys, *argv)
    assert code == EXIT_USAGE and out == ""
    assert "usage:" not in err  # the usage block is what --help is for
    lines = err.splitlines()
    assert len(lines) == 2 and lines[0].startswith("graphaudit") and ": error: " in lines[0]
    assert lines[1] == f"For the options: {hint}"


@pytest.mark.parametrize(
    "argv",
    [
        ["--input", "2x4", "--probe"],  # a loss and an optimizer, no label
        ["--probe"],  # no batch at all
    ],
)
def test_a_probe_without_what_it_needs_is_told_in_the_commands_words(capsys, factories, argv):
    code, _, err = run(capsys, "audit", f"{factories}:with_loss", *argv)
    assert code == EXIT_USAGE and "--label SHAPE[:DTYPE]" in err
    for python_words in ("label=y", "inputs=(", "run_probe(", "audit(net"):
        assert python_words not in err

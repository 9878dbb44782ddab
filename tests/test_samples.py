"""Every check fires on its bad sample, names the right subject, and is silent on its good one.

Samples live in ``samples/<ID>/bad.py`` and ``samples/<ID>/good.py``. Each defines
``build()``, returning the keyword arguments of :func:`graphaudit.audit` (``net`` and any of
``optimizer``, ``inputs``, ``loss_fn``, ``spec``); ``bad.py`` also defines ``SUBJECT``, the
exact parameter name or cell path its finding must name, and ``SLOW = True`` when its audit is
slow (a real msrun job): the sample carries its own facts, a new check edits no test file.
"""

from __future__ import annotations

import json
from types import ModuleType

import pytest
from golden import compare_with_golden
from sample_audits import IDS, SAMPLES, audited

import graphaudit
from graphaudit.checks import all_checks

CHECKS = all_checks()


def run(check_id: str, which: str) -> tuple[ModuleType, graphaudit.Report]:
    path = SAMPLES / check_id / f"{which}.py"
    if not path.exists():
        pytest.fail(f"check {check_id} has no sample {path.relative_to(SAMPLES.parent)}")
    module, _, report = audited(check_id, which)
    return module, report


@pytest.mark.parametrize("check_id", IDS)
def test_bad_sample_fires_with_the_exact_subject_and_the_declared_severities(check_id):
    """It fires, names the sample's subject, and reports what its declaration says (the severity
    SARIF, the docs and `graphaudit checks` show); one audit of the sample for all of it."""
    module, report = run(check_id, "bad")
    assert check_id in report.checks_run, report.skipped.get(check_id)
    found = report.by_check(check_id)  # its own findings, and those it confirmed
    assert found, f"{check_id} did not fire on its bad sample:\n{report}"
    subjects = {s for f in found for s in (f.subject, *f.subjects)}
    assert module.SUBJECT in subjects, subjects
    for finding in found:
        assert finding.name == CHECKS[finding.check_id].name
        assert finding.message and finding.fix and finding.nodes
        assert isinstance(finding.cause, CHECKS[finding.check_id].causes)  # its facts, as data
        json.dumps(finding.to_dict(), allow_nan=False)  # which JSON and SARIF carry as they are
        assert all(node in report.graph for node in finding.nodes)
    check = CHECKS[check_id]
    emitted = {f.severity for f in report.findings if f.reported_by(check_id)}
    assert check.severity in emitted, (check.severity, emitted)
    assert emitted <= set(check.severities), (emitted, check.severities)
    compare_with_golden(check_id, report)  # and says what it said: samples/<ID>/bad.expected


@pytest.mark.parametrize("check_id", IDS)
def test_good_sample_is_silent(check_id):
    _, report = run(check_id, "good")
    assert check_id in report.checks_run, report.skipped.get(check_id)
    loud = [f for f in report.by_check(check_id) if f.severity != "info"]
    assert not loud, f"{check_id} fired on its good sample:\n{report}"
    # the fixed version is what users copy: no other check may object to it either
    others = [f"{f.check_id} {f.subject}" for f in report.findings if f.severity != "info"]
    assert not others, f"other checks fired on {check_id}'s good sample: {others}"


# More cases of a check, each in the format of bad.py / good.py: samples/<ID>/bad_<case>.py, good_<case>.py.
CASES = sorted(
    p.relative_to(SAMPLES) for p in SAMPLES.glob("GA*/*.py") if p.stem.startswith(("bad_", "good_"))
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_each_further_case_fires_or_is_silent_as_its_name_says(case):
    check_id, which = case.parent.name, case.stem
    module, _, report = audited(check_id, which)
    assert check_id in report.checks_run, report.skipped.get(check_id)
    loud = [f for f in report.findings if f.severity != "info"]
    if which.startswith("good_"):
        assert not loud, f"{case} is not silent:\n{report}"
        return
    found = report.by_check(check_id)
    assert found, f"{check_id} did not fire on {case}:\n{report}"
    assert module.SUBJECT in {s for f in found for s in (f.subject, *f.subjects)}
    assert all(node in report.graph for f in found for node in f.nodes)


def test_every_sample_folder_belongs_to_a_check():
    folders = {p.name for p in SAMPLES.iterdir() if p.is_dir() and p.name.startswith("GA")}
    assert folders <= set(CHECKS), folders - set(CHECKS)

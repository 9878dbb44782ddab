"""Every severity a check declares besides its main one (``register(..., also=...)``) is shown emitted.

``tests/test_samples.py`` shows each check's main severity on its bad sample. The others live in
``samples/<ID>/also_<severity>.py``, in the same format as ``bad.py`` (``build()`` returning the
keyword arguments of :func:`graphaudit.audit`, ``SUBJECT`` the parameter name or cell path the
finding names), each a real network whose case is of that severity; its docstring says why.
"""

from __future__ import annotations

import pytest
from sample_audits import SAMPLES, load

import graphaudit
from graphaudit.checks import all_checks

CHECKS = all_checks()
DECLARED = [(check_id, severity) for check_id in sorted(CHECKS) for severity in CHECKS[check_id].also]
#: (check, severity) pairs no cheap real sample can show, with the reason; none so far.
EXCEPTIONS: dict[tuple[str, str], str] = {}
PAIRS = [
    pytest.param(c, s, id=f"{c}-{s}", marks=pytest.mark.skip(reason=EXCEPTIONS[c, s]))
    if (c, s) in EXCEPTIONS
    else pytest.param(c, s, id=f"{c}-{s}")
    for c, s in DECLARED
]


@pytest.mark.parametrize(("check_id", "severity"), PAIRS)
def test_declared_also_severity_is_emitted_by_its_sample(check_id, severity):
    path = SAMPLES / check_id / f"also_{severity}.py"
    assert path.exists(), (
        f"{check_id} declares also={severity!r} but has no sample {path.relative_to(SAMPLES.parent)}"
    )
    module = load(path)
    assert (module.__doc__ or "").startswith(f"{check_id} {severity}:"), (
        "the docstring says what case it shows"
    )
    kwargs = module.build()
    report = graphaudit.audit(kwargs.pop("net"), **kwargs)
    assert check_id in report.checks_run, report.skipped.get(check_id)
    found = [f for f in report.findings if f.reported_by(check_id)]  # its own, and those it confirmed
    emitted = {f.severity for f in found}
    assert severity in emitted, (
        f"{check_id} emitted {emitted or 'nothing'} on {path.name}, not {severity}:\n{report}"
    )
    assert emitted <= set(CHECKS[check_id].severities), (emitted, CHECKS[check_id].severities)
    subjects = {s for f in found if f.severity == severity for s in (f.subject, *f.subjects)}
    assert module.SUBJECT in subjects, subjects
    for finding in found:
        assert finding.name == CHECKS[finding.check_id].name
        assert finding.message and finding.fix and finding.nodes
        assert all(node in report.graph for node in finding.nodes)


def test_every_also_sample_is_a_declared_also_severity():
    files = sorted(SAMPLES.glob("*/also_*.py"))
    assert files, "no also_ samples found"
    for path in files:
        check_id, severity = path.parent.name, path.stem.removeprefix("also_")
        assert check_id in CHECKS, path
        assert severity in CHECKS[check_id].also, (
            f"{path.relative_to(SAMPLES.parent)}: {check_id} declares also={CHECKS[check_id].also}, "
            f"not {severity!r} (its main severity {CHECKS[check_id].severity!r} is bad.py's)"
        )
    assert set(EXCEPTIONS) <= set(DECLARED), set(EXCEPTIONS) - set(DECLARED)

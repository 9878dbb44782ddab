"""A finding's message and fix never send the reader to a check that is not in the report.

"see GA904" in a finding's text names another check the reader has no finding of: it may not
have run, or it may have found nothing. The texts say in words what to look at and what to do
(issue 22). Over every finding of every sample of ``samples/`` (bad, good and ``also_*``,
the watched runs among them), each check ID a message or fix names must be a check that
reported a finding of that same report (made it or confirmed it).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from sample_audits import SAMPLES, audited, is_slow

import graphaudit

#: A check ID, also as the end of a range (GA051-GA054), not inside a path (/tmp/graphaudit-GA001-x2b).
CHECK_ID = re.compile(r"(?<![\w/])(?<![A-Za-z]-)GA\d{3}(?!\w)")
SAMPLE_FILES = sorted(p for p in SAMPLES.glob("GA*/*.py"))


def _param(path: Path):
    marks = [pytest.mark.slow] if is_slow(path.parent.name) else []
    return pytest.param(path, id=f"{path.parent.name}/{path.stem}", marks=marks)


def dangling(report: graphaudit.Report) -> list[tuple[str, str, str]]:
    """``(check, named ID, text)`` for each check ID a finding's text names that reported nothing here."""
    present = {c for f in report.findings for c in (f.check_id, *f.confirmed_by)}
    return [
        (f.check_id, named, text)
        for f in report.findings
        for text in (f.message, f.fix)
        for named in dict.fromkeys(CHECK_ID.findall(text))
        if named not in present
    ]


@pytest.mark.parametrize("path", [_param(p) for p in SAMPLE_FILES])
def test_no_finding_sends_the_reader_to_a_check_missing_from_the_report(path):
    report = audited(path.parent.name, path.stem).report
    found = dangling(report)
    assert not found, "\n".join(f"{check} names {named}: {text}" for check, named, text in found)

"""SARIF: every bad sample's finding points at the line of the sample that creates what it flags.

The line of the cell, parameter or optimizer a finding is about (GA401: the ``Dense`` built
with ``activation="sigmoid"``, not the loss and not the factory's ``def``); for a loss, a
data-pipeline step or the whole network, the factory's line that creates it. The sample marks
that line itself, with a trailing ``# <- SARIF`` (several lines when its findings point at
several); a sample with no mark is about the label handed to ``audit()`` (GA051-GA054: no line
of the network creates it), whose findings keep the fallback, the factory.
"""

from __future__ import annotations

import linecache

import pytest
from sample_audits import IDS, SAMPLES, located_sample_log, marked_lines


@pytest.mark.parametrize("check_id", IDS)
def test_a_bad_samples_finding_points_at_the_line_that_creates_what_it_flags(check_id):
    report, log = located_sample_log(SAMPLES / check_id / "bad.py")
    found = [
        (finding, result)
        for finding, result in zip(report.findings, log["runs"][0]["results"])
        if finding.reported_by(check_id)
    ]
    assert found
    marked = marked_lines(SAMPLES / check_id / "bad.py")
    for finding, result in found:
        physical = result["locations"][0]["physicalLocation"]
        if not marked:  # about the label given to audit(): the factory, as a fallback
            assert physical == {"artifactLocation": {"uri": "factory.py"}, "region": {"startLine": 1}}, (
                f"{check_id}'s finding about {finding.subject} is located: mark the line it points at in "
                "samples/{check_id}/bad.py with a trailing '# <- SARIF'"
            )
            continue
        assert physical["artifactLocation"]["uri"] != "factory.py", (finding.subject, "not located")
        line = physical["region"]["startLine"]
        text = linecache.getline(str(SAMPLES / check_id / "bad.py"), line).strip()
        assert line in marked, (finding.subject, line, text)

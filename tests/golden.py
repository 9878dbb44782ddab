"""Golden output: what graphaudit says about each bad sample, kept next to it and reviewed as a diff.

``samples/<ID>/bad.expected`` holds the findings of the audit of ``samples/<ID>/bad.py`` as the
text report shows them, then each finding's fields as JSON (its check, severity, subjects, and
the typed cause its message and fix are rendered from). tests/test_samples.py compares every bad
sample's audit with its file; a wording change is then a diff in review, not a silent drift.

Regenerate every file (one command, after a deliberate change; review ``git diff samples``):

    GRAPHAUDIT_GOLDEN=update bash scripts/test.sh tests/test_samples.py -k bad_sample

Floats in the fields are kept to 6 significant digits and compared within a relative 1e-4; in the
text, what users read, every word exactly and each measured figure with a decimal point within a
relative 1% (the report shows 3 significant digits: a port's max relative error of 0.00434 on one CPU
was 0.00436 on another). Counts, integers, are compared exactly. Temporary folders that samples write files to show as ``<tmp>/prefix-XXXXXXXX``. The header line (how many checks ran) and the list of checks not run are left out: a new check
would otherwise change every file.
"""

from __future__ import annotations

import difflib
import json
import math
import os
import re
import tempfile

from sample_audits import SAMPLES

import graphaudit
from graphaudit.findings import SEVERITIES

UPDATE = os.environ.get("GRAPHAUDIT_GOLDEN") == "update"
# The smoke run on the oldest MindSpore supported (scripts/test-oldest.sh) turns the comparison off:
# its kernels round the measured figures (a percentage, a norm) in other last digits.
OFF = os.environ.get("GRAPHAUDIT_GOLDEN") == "off"
#: A folder made by tempfile.mkdtemp (its prefix kept, its 8 random characters not): samples write files there.
_TEMPORARY = re.compile(re.escape(tempfile.gettempdir()) + r"/([\w.-]*?[-_])?[a-z0-9_]{8}(?![\w-])")
_HEAD = (
    "# What graphaudit reports on samples/{id}/bad.py: its findings as the text report shows them,\n"
    "# then their fields. Regenerate: GRAPHAUDIT_GOLDEN=update bash scripts/test.sh tests/test_samples.py -k bad_sample\n"
)


def golden_text(check_id: str, report: graphaudit.Report) -> str:
    """The golden file's text for *report*, the audit of *check_id*'s bad sample."""
    text = report.text().split("\nNOT RUN", 1)[0]
    findings = text.split("\n", 1)[1].strip("\n") if "\n" in text else ""
    fields = [
        {
            key: _rounded(value)
            for key, value in finding.to_dict().items()
            if key not in ("name", "message", "fix", "nodes") and value not in ([], None)
        }
        for severity in SEVERITIES
        for finding in report.of_severity(severity)
    ]
    said = f"{_HEAD.format(id=check_id)}\n{findings}\n\n{json.dumps(fields, indent=1, ensure_ascii=False)}\n"
    return _TEMPORARY.sub(r"<tmp>/\1XXXXXXXX", said)


def _rounded(value: object) -> object:
    """*value* with every float to 6 significant digits: the facts, not the last bits a CPU's kernels round."""
    if isinstance(value, float):
        return float(f"{value:.6g}")
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    return value


#: How far a measured float in the fields may move between machines: the last of its 6 digits does
#: (a gradient's trace of 8.11397 on one CPU is 8.11398 on another; their kernels sum in other orders).
RELATIVE_TOLERANCE = 1e-4
#: How far a measured figure the text shows (3 significant digits) may move between machines.
SHOWN_TOLERANCE = 1e-2
#: A figure with a decimal point or an exponent in the text (a count, an ID's digits are not one).
_FIGURE = re.compile(r"(?<![\w.])(-?\d+\.\d+(?:e[-+]?\d+)?|-?\d+e[-+]?\d+)(?![\w.])")


def same_saying(expected: str, said: str) -> bool:
    r"""Whether two golden texts say the same: the words exactly, the fields' floats within the tolerance.

    Example:
        >>> same_saying('x\n\n[{"trace": 8.11397}]\n', 'x\n\n[{"trace": 8.11398}]\n')
        True
        >>> same_saying('x\n\n[{"trace": 8.11397}]\n', 'x\n\n[{"trace": 8.2}]\n')
        False
        >>> same_saying('error 0.00434 in 12\n\n[]\n', 'error 0.00436 in 12\n\n[]\n')
        True
        >>> same_saying('error 0.00434 in 12\n\n[]\n', 'error 0.00434 in 13\n\n[]\n')
        False
    """
    if expected == said:
        return True
    expected_words, _, expected_fields = expected.rpartition("\n\n")
    said_words, _, said_fields = said.rpartition("\n\n")
    if not _same_words(expected_words, said_words):
        return False
    try:
        return _close(json.loads(expected_fields), json.loads(said_fields))
    except ValueError:
        return False


def _same_words(expected: str, said: str) -> bool:
    """The text's words exactly, its measured figures within :data:`SHOWN_TOLERANCE`."""
    if expected == said:
        return True
    expected_parts, said_parts = _FIGURE.split(expected), _FIGURE.split(said)
    if len(expected_parts) != len(said_parts):
        return False
    # split() alternates: words at even indices, the figures between them at odd ones
    return all(
        a == b if i % 2 == 0 else math.isclose(float(a), float(b), rel_tol=SHOWN_TOLERANCE)
        for i, (a, b) in enumerate(zip(expected_parts, said_parts))
    )


def _close(a: object, b: object) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return (
            isinstance(a, (int, float))
            and isinstance(b, (int, float))
            and math.isclose(a, b, rel_tol=RELATIVE_TOLERANCE)
        )
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_close(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_close(a[k], b[k]) for k in a)
    return a == b


def compare_with_golden(check_id: str, report: graphaudit.Report) -> None:
    """Assert that *report* says what ``samples/<check_id>/bad.expected`` holds (or write it, updating)."""
    if OFF:
        return
    path = SAMPLES / check_id / "bad.expected"
    said = golden_text(check_id, report)
    if UPDATE:
        if not path.exists() or not same_saying(path.read_text(encoding="utf-8"), said):
            path.write_text(said, encoding="utf-8")
        return
    assert path.exists(), (
        f"{path.relative_to(SAMPLES.parent)} is missing: regenerate it ({__doc__.split('::')[0]})"
    )
    expected = path.read_text(encoding="utf-8")
    if not same_saying(expected, said):
        diff = difflib.unified_diff(
            expected.splitlines(), said.splitlines(), f"samples/{check_id}/bad.expected", "now", lineterm=""
        )
        raise AssertionError(
            f"what graphaudit says about samples/{check_id}/bad.py changed: if it is meant to, regenerate "
            "with GRAPHAUDIT_GOLDEN=update (tests/golden.py) and review the diff\n" + "\n".join(diff)
        )

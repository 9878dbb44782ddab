"""Every bad sample that can be widened gives as many findings at any width: one cause, one finding.

A bad sample whose ``build()`` takes ``width`` (how many blocks, layers or copies repeat its
mistake) is audited at its own width and at a wider one: its check must report the same
number of findings, each naming more subjects. tests/test_one_cause_one_finding.py does the
same for checks whose sample has no natural width (a misspelt freeze, a head left out of the
optimizer, dropouts...), on a stack of layers of any depth.
"""

from __future__ import annotations

import inspect

import pytest
from widened import WIDENED, load

import graphaudit

MORE = 3  # how many more blocks than the sample's own: enough to show growth, and fast


def own(check_id: str, width: int | None) -> list[graphaudit.Finding]:
    kwargs = load(check_id, "bad").build(**({} if width is None else {"width": width}))
    report = graphaudit.audit(kwargs.pop("net"), **kwargs)
    return [f for f in report.findings if f.reported_by(check_id)]


def test_enough_bad_samples_can_be_widened():
    assert len(WIDENED) >= 6, WIDENED  # a sample that loses its width loses this test


@pytest.mark.parametrize("check_id", WIDENED)
def test_a_widened_bad_sample_gives_as_many_findings(check_id):
    width = inspect.signature(load(check_id, "bad").build).parameters["width"].default
    narrow, wide = own(check_id, None), own(check_id, width + MORE)
    assert narrow and len(wide) == len(narrow), [(f.subject, f.subjects) for f in wide]
    subjects = lambda found: sum(len(f.subjects) or 1 for f in found)  # noqa: E731
    assert subjects(wide) >= subjects(narrow), (narrow, wide)

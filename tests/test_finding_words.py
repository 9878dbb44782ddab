"""Findings say what was seen and what to rule out, in words a person reads (issue 22).

Each text is read from a check's own sample, audited once per session (tests/sample_audits.py).
"""

from __future__ import annotations

import re

import pytest
from sample_audits import audited


def test_a_division_finding_says_what_the_divisor_is_and_where_once():
    """Masked mean pooling by ``/``: the risk is a zero count (an all-padding row), not a sign.

    The cell is named once, in words (the network itself, its class), and the divisor by what
    it is: the sum of the network's second input (the mask), not known to be non-zero.
    """
    (finding,) = audited("GA703", "bad").report.by_check("GA703")
    text = finding.message
    assert "sign" not in text, text
    assert "(root)" not in text, text  # the subject stays "(root)"; the words say which cell
    assert "MaskedMean" in text and "the network's second input" in text, text
    assert "not known to be non-zero" in text and "all padding" in text, text


def test_a_flat_loss_names_labels_without_signal_as_a_cause_to_rule_out():
    """A run on random labels is flat at any learning rate: the fix says so, without naming a check."""
    (finding,) = audited("GA952", "bad").report.by_check("GA952")
    assert "Raise the learning rate" in finding.fix
    assert "labels that carry no signal" in finding.fix, finding.fix
    assert not re.search(r"GA\d{3}", finding.fix), finding.fix


@pytest.mark.parametrize(
    ("check_id", "which"),
    [
        ("GA060", "bad"),
        ("GA901", "bad"),
        ("GA901", "also_warning"),
        ("GA906", "bad"),
        ("GA912", "bad"),
        ("GA913", "bad"),
        ("GA913", "also_info"),
        ("GA952", "bad"),
        ("GA960", "bad"),
    ],
)
def test_these_checks_say_what_to_look_at_in_words_and_name_no_other_check(check_id, which):
    """Even a check that is in the report: "(see GA904)" asks the reader to go and look it up."""
    texts = [t for f in audited(check_id, which).report.by_check(check_id) for t in (f.message, f.fix)]
    assert texts and not [t for t in texts if re.search(r"\bGA\d{3}\b", t)], texts

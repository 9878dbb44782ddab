"""The checks whose bad sample takes ``width`` (how many blocks, layers or copies repeat its mistake).

tests/test_widened_samples.py audits each at two widths; tests/test_one_cause_coverage.py counts
them as held to "one cause, one finding".
"""

from __future__ import annotations

import inspect

from sample_audits import SAMPLES
from sample_audits import load as load_file

from graphaudit.checks import all_checks

CHECKS = all_checks()


def load(check_id: str, which: str):
    return load_file(SAMPLES / check_id / f"{which}.py")


WIDENED = sorted(c for c in CHECKS if "width" in inspect.signature(load(c, "bad").build).parameters)

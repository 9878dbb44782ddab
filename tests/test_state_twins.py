"""What the user does after an audit gives what it gives without one, down to every random draw.

Each arm runs in two fresh processes seeded alike (``tests/state_twin.py``, started by
``tests/twins.py``): one never audited, one audited first; the digests of what the user's
code then produces must be equal.
The in-process tests (test_dataset_sampling, test_side_effects) cannot see state that lives in
MindSpore's C++ side or in functions bound before the audit; a second process can.
"""

from __future__ import annotations

import pytest
import twins

# what an audit leaves behind, against a never-audited twin: with MindSpore's queue, as users run
pytestmark = pytest.mark.asynchronous

WORKER = twins.TESTS / "state_twin.py"


def _digest(process) -> str:
    return twins.finish(process).strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("arm", ["rng", "dataset", "reference"])
def test_after_an_audit_the_users_next_draws_are_a_never_audited_twins(arm, tmp_path):
    audited = twins.start(WORKER, arm, "1", cwd=tmp_path)
    twin = twins.start(WORKER, arm, "0", cwd=tmp_path)
    assert _digest(audited) == _digest(twin)

"""What the user does after an audit gives what it gives without one, down to every random draw.

Each arm runs in two fresh processes seeded alike (``tests/state_twin.py``): one never
audited, one audited first; the digests of what the user's code then produces must be equal.
The in-process tests (test_dataset_sampling, test_side_effects) cannot see state that lives in
MindSpore's C++ side or in functions bound before the audit; a second process can.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

WORKER = Path(__file__).resolve().parent / "state_twin.py"
ROOT = WORKER.parent.parent


def _start(arm: str, audited: bool, folder: Path) -> subprocess.Popen:
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
        "GLOG_v": "3",
    }
    return subprocess.Popen(
        [sys.executable, str(WORKER), arm, "1" if audited else "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=folder,  # MindSpore's dumps, if any, land here, not in the checkout
    )


def _digest(process: subprocess.Popen) -> str:
    out, err = process.communicate(timeout=600)
    assert process.returncode == 0, err[-3000:]
    return out.strip().splitlines()[-1]


@pytest.mark.slow
@pytest.mark.parametrize("arm", ["rng", "dataset"])
def test_after_an_audit_the_users_next_draws_are_a_never_audited_twins(arm, tmp_path):
    audited, twin = _start(arm, True, tmp_path), _start(arm, False, tmp_path)
    assert _digest(audited) == _digest(twin)

"""tests/twins.py, the one way the tests start Python in a fresh process, and that they all use it."""

from __future__ import annotations

import ast
import os

import pytest
import twins

_SAYS = "import os, sys, graphaudit; print(os.environ['PYTHONHASHSEED'], graphaudit.__file__, os.getcwd())"


def test_a_fresh_process_imports_this_checkout_with_one_hash_seed_in_a_scratch_folder(tmp_path):
    seed, package, folder = twins.finish(twins.start("-c", _SAYS, cwd=tmp_path)).split()
    assert seed == "0" and package == str(twins.ROOT / "graphaudit" / "__init__.py")
    assert os.path.samefile(folder, tmp_path)
    assert twins.run("-c", _SAYS, hash_seed="4242").stdout.split()[0] == "4242"


def test_a_fresh_process_is_refused_the_checkout_as_its_working_folder():
    for folder in (twins.ROOT, twins.TESTS):
        with pytest.raises(AssertionError, match="must not run in the checkout"):
            twins.run("-c", "pass", cwd=folder)


def test_environment_sets_and_drops_variables(monkeypatch):
    monkeypatch.setenv("GRAPHAUDIT_TWIN_PROBE", "x")
    env = twins.environment(GRAPHAUDIT_TWIN_PROBE=None, RANK_ID="3")
    assert "GRAPHAUDIT_TWIN_PROBE" not in env and env["RANK_ID"] == "3" and env["GLOG_v"] == "3"
    assert env["PYTHONPATH"].split(os.pathsep)[0] == str(twins.ROOT)


def _starts_python_itself(path) -> list[int]:
    """Lines of *path* that run ``sys.executable`` with subprocess, not through tests/twins.py."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not (isinstance(node, ast.Call) and ast.unparse(node.func).startswith("subprocess.")):
            continue
        if any("sys.executable" in ast.unparse(arg) for arg in node.args):
            found.append(node.lineno)
    return found


def test_every_test_starts_python_through_twins():
    """One helper (the checkout first, one hash seed, a scratch folder), not one per test module."""
    wrong = {
        path.name: lines
        for path in sorted(twins.TESTS.glob("*.py"))
        if path.name != "twins.py" and (lines := _starts_python_itself(path))
    }
    assert not wrong, f"start fresh processes with tests/twins.py: {wrong}"


#: A kernel that fails on its input (BCE of -1) raises at its call when dispatched synchronously,
#: and when its output is read when queued.
_FAILS = """
import mindspore as ms, numpy as np
from mindspore import Tensor, ops
try:
    out = ops.binary_cross_entropy(Tensor(np.array([-1.0, 0.5], np.float32)), Tensor(np.ones(2, np.float32)))
except Exception:
    print("at the call")
else:
    try:
        out.asnumpy()
    except Exception:
        print("when read")
"""


def test_a_fresh_process_dispatches_as_this_one_does():
    """Synchronously when this process does (most tests: tests/conftest.py), else MindSpore's queue."""
    import mindspore as ms

    synchronous = bool(ms.get_context("pynative_synchronize"))
    assert ("MS_DEV_LAUNCH_BLOCKING" in twins.environment()) is synchronous
    assert twins.run("-c", _FAILS).stdout.split("\n")[0] == ("at the call" if synchronous else "when read")

"""Every check is held to "one cause, one finding", or says why its finding cannot repeat.

A check is covered when its bad sample takes ``width=`` (tests/test_widened_samples.py audits
it at two widths), when a test of ``tests/test_one_cause*.py`` parametrized over ``width``
names it, or when it declares ``register(..., once="one finding per ...: why")``. A new check
with none of the three fails here.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest
from widened import WIDENED

from graphaudit.checks import all_checks

CHECKS = all_checks()
TESTS = Path(__file__).resolve().parent
_ID = re.compile(r"^GA\d{3}$")


def _over_widths(function: ast.FunctionDef) -> bool:
    """Whether *function* is decorated with ``pytest.mark.parametrize("width", ...)``."""
    for decorator in function.decorator_list:
        if isinstance(decorator, ast.Call) and ast.unparse(decorator.func).endswith("mark.parametrize"):
            first = decorator.args[0] if decorator.args else None
            if isinstance(first, ast.Constant) and first.value == "width":
                return True
    return False


def _ids(node: ast.AST) -> set[str]:
    """The check IDs written as strings anywhere in *node*."""
    return {
        n.value
        for n in ast.walk(node)
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and _ID.match(n.value)
    }


def one_cause_tests() -> dict[str, list[str]]:
    """Check ID -> the tests over several widths that name it, in tests/test_one_cause*.py.

    A test names a check in its body or decorators, or through a module-level constant it
    reads (``CASES = {"GA401": ...}`` with ``@pytest.mark.parametrize("check_id", sorted(CASES))``).
    """
    found: dict[str, list[str]] = {}
    for path in sorted(TESTS.glob("test_one_cause*.py")):
        module = ast.parse(path.read_text(encoding="utf-8"))
        constants = {
            target.id: _ids(node.value)
            for node in module.body
            if isinstance(node, ast.Assign)
            for target in node.targets
            if isinstance(target, ast.Name)
        }
        for node in module.body:
            if isinstance(node, ast.FunctionDef) and node.name.startswith("test_") and _over_widths(node):
                names = {n.id for n in ast.walk(node) if isinstance(n, ast.Name)}
                for check_id in _ids(node).union(*(constants.get(name, set()) for name in names)):
                    found.setdefault(check_id, []).append(f"{path.name}::{node.name}")
    return found


ONE_CAUSE = one_cause_tests()


def test_the_one_cause_tests_are_found():
    assert {"GA201", "GA204", "GA701"} <= set(ONE_CAUSE), ONE_CAUSE  # the scan itself still reads them


@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_every_check_is_one_cause_one_finding_or_says_why_it_cannot_repeat(check_id):
    check = CHECKS[check_id]
    covered = [
        *(["tests/test_widened_samples.py"] if check_id in WIDENED else []),
        *ONE_CAUSE.get(check_id, []),
    ]
    if check.once:
        assert not covered, (
            f"{check_id} declares once={check.once!r} but is audited at several widths: {covered}"
        )
        return
    assert covered, (
        f"{check_id} ({check.name}): give samples/{check_id}/bad.py a build(width=...) that repeats its mistake, "
        "test it over several widths in tests/test_one_cause*.py, or declare why one cause cannot give it "
        "several findings: register(..., once='one finding per ...: why')"
    )

"""The graphaudit pytest plugin: design snapshots of networks.

Installed with graphaudit (entry point ``pytest11``: ``graphaudit``), or loaded with
``pytest -p graphaudit.pytest_plugin``. It adds

- the fixture ``design_snapshot``: ``design_snapshot(net, "designs/net.toml", inputs=x)``
  writes ``Spec.from_net(net, inputs)`` to the file when it does not exist yet, and
  otherwise fails the test, listing every difference, when the network no longer matches
  it (see :func:`graphaudit.testing.assert_matches_spec`);
- the option ``--graphaudit-update-snapshots``: rewrite every snapshot file instead.

A relative path is taken from the folder of the test file. Commit the snapshot files: they
are the reviewed design.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from graphaudit.spec import Spec
from graphaudit.testing import assert_matches_spec

__all__ = ["design_snapshot", "pytest_addoption"]

OPTION = "--graphaudit-update-snapshots"


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("graphaudit")
    group.addoption(
        OPTION,
        action="store_true",
        default=False,
        help="graphaudit: rewrite the design snapshot files of the design_snapshot fixture "
        "from the networks as they are now, instead of comparing with them.",
    )


@pytest.fixture
def design_snapshot(request: pytest.FixtureRequest) -> Callable[..., Spec]:
    """``check(net, path, *, inputs=None, depth=1) -> Spec``: compare *net* with its snapshot.

    When the TOML file at *path* does not exist, or pytest runs with
    ``--graphaudit-update-snapshots``, ``Spec.from_net(net, inputs, depth=depth)`` is written
    there and the check passes; otherwise the network must match the file. Returns the spec.
    """
    update = bool(request.config.getoption(OPTION))
    base = Path(request.path).parent

    def check(net: Any, path: str | Path, *, inputs: Any = None, depth: int = 1) -> Spec:
        target = Path(path)
        if not target.is_absolute():
            target = base / target
        if update or not target.exists():
            spec = Spec.from_net(net, inputs, depth=depth)
            spec.save(target)
            spec.source = str(target)
            return spec
        __tracebackhide__ = True
        assert_matches_spec(net, target, inputs=inputs)
        return Spec.load(target)

    return check

"""The graphaudit pytest plugin: design snapshots of networks.

Installed with graphaudit (entry point ``pytest11``: ``graphaudit``), or loaded with
``pytest -p graphaudit.pytest_plugin``. It adds

- the fixture ``design_snapshot``: ``design_snapshot(net, "designs/net.toml", inputs=x)``
  writes ``Spec.from_net(net, inputs)`` to the file when it does not exist yet, and
  otherwise fails the test, listing every difference, when the network no longer matches
  it (see :func:`graphaudit.testing.assert_matches_snapshot`);
- the option ``--graphaudit-update-snapshots``: rewrite every snapshot file instead;
- the configuration: ``graphaudit.audit()`` in the tests reads the ``[tool.graphaudit]`` table
  of the rootdir's ``pyproject.toml`` (see :mod:`graphaudit.runner.config`), wherever the
  tests change the working folder to.

A relative path is taken from the folder of the test file. Commit the snapshot files: they
are the reviewed design.

The entry point loads this module in every pytest session where graphaudit is installed, so
it imports nothing but pytest when loaded: :mod:`graphaudit.testing` (and through it the
capture, and MindSpore) is imported when a test first uses the fixture.

Example:
    >>> import os, subprocess, sys
    >>> env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
    >>> done = subprocess.run(
    ...     [sys.executable, "-m", "pytest", "-p", "graphaudit.pytest_plugin", "-p", "no:cacheprovider", "--help"],
    ...     capture_output=True, text=True, env=env, check=True,
    ... )
    >>> "--graphaudit-update-snapshots" in done.stdout
    True
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from graphaudit.spec import Spec

__all__ = ["OPTION", "design_snapshot", "pytest_addoption", "pytest_configure"]

OPTION = "--graphaudit-update-snapshots"


def pytest_addoption(parser: pytest.Parser) -> None:
    """Add ``--graphaudit-update-snapshots`` to pytest's command line (the "graphaudit" group).

    Example:
        >>> import os, subprocess, sys
        >>> env = dict(os.environ, PYTEST_DISABLE_PLUGIN_AUTOLOAD="1")
        >>> help_text = subprocess.run(
        ...     [sys.executable, "-m", "pytest", "-p", "graphaudit.pytest_plugin", "-p", "no:cacheprovider", "--help"],
        ...     capture_output=True, text=True, env=env, check=True,
        ... ).stdout
        >>> help_text[help_text.index("graphaudit:"):].split()[:2]
        ['graphaudit:', '--graphaudit-update-snapshots']
    """
    group = parser.getgroup("graphaudit")
    group.addoption(
        OPTION,
        action="store_true",
        default=False,
        help="graphaudit: rewrite the design snapshot files of the design_snapshot fixture "
        "from the networks as they are now, instead of comparing with them.",
    )


def pytest_configure(config: pytest.Config) -> None:
    """Point ``graphaudit.audit()`` at the rootdir's ``[tool.graphaudit]`` (unless one is named already).

    Read as text, not parsed: loading the plugin stays free of graphaudit's imports.
    """
    pyproject = Path(config.rootpath) / "pyproject.toml"
    try:
        text = pyproject.read_text(encoding="utf-8")
    except OSError:
        return
    if "[tool.graphaudit" in text:
        os.environ.setdefault("GRAPHAUDIT_CONFIG", str(pyproject))


@pytest.fixture
def design_snapshot(request: pytest.FixtureRequest) -> Callable[..., Spec]:
    """``check(net, path, *, inputs=None, depth=1) -> Spec``: compare *net* with its snapshot.

    When the TOML file at *path* does not exist, or pytest runs with
    ``--graphaudit-update-snapshots``, ``Spec.from_net(net, inputs, depth=depth)`` is written
    there and the check passes; otherwise the network must match the file. A relative *path*
    is taken from the test file's folder. Returns the spec. In a test::

        def test_design(design_snapshot):
            design_snapshot(build_model(), "designs/model.toml", inputs=batch)

    ``check`` is :func:`graphaudit.testing.assert_matches_snapshot` with the path resolved and
    ``update`` taken from the command line.

    Example:
        >>> import os, tempfile
        >>> import numpy as np
        >>> from mindspore import nn, Tensor
        >>> from graphaudit.testing import assert_matches_snapshot
        >>> folder = tempfile.mkdtemp()  # as if it held the test file
        >>> x = Tensor(np.ones((1, 4), np.float32))
        >>> first = assert_matches_snapshot(nn.Dense(4, 2), os.path.join(folder, "designs/dense.toml"), inputs=x)
        >>> sorted(os.listdir(os.path.join(folder, "designs"))), first.frozen
        (['dense.toml'], [])
    """
    from graphaudit.testing import assert_matches_snapshot

    update = bool(request.config.getoption(OPTION))
    base = Path(request.path).parent

    def check(net: Any, path: str | Path, *, inputs: Any = None, depth: int = 1) -> Spec:
        __tracebackhide__ = True
        target = Path(path)
        if not target.is_absolute():
            target = base / target
        return assert_matches_snapshot(net, target, inputs=inputs, depth=depth, update=update)

    return check

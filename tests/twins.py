"""The tests' one way to run Python in a fresh process: twins, workers, the command line.

A twin test runs the same script in two (or more) fresh processes that differ only in what
the test makes them do (audited or not, watched or not), and compares what they print or
write. For that comparison to mean something, every process gets the same start:

- this checkout's ``graphaudit`` (its root first on ``PYTHONPATH``), not an installed copy;
- one string-hash seed, ``PYTHONHASHSEED=0`` unless a test chooses another (the test of
  hash-seed independence runs two seeds on purpose); the scripts seed MindSpore's, NumPy's
  and Python's generators themselves;
- MindSpore's C++ log quiet (``GLOG_v=3``);
- MindSpore's PyNative dispatch as in this process: ``tests/conftest.py``, when it makes this
  process dispatch synchronously (most tests), also sets ``MS_DEV_LAUNCH_BLOCKING=1`` in its
  environment, which every fresh process inherits; the tests marked ``asynchronous`` leave it
  unset, so a twin of a failing probe queues its kernels as users run;
- a working folder outside the checkout (MindSpore's dumps land there): the test's own
  scratch folder by default (``tests/conftest.py`` gives every test one), refused when it
  is inside the checkout.

Example:
    >>> run("-c", "print(1)", cwd=ROOT / "tests")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: a fresh process must not run in the checkout (...): pass cwd=tmp_path
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

__all__ = ["ROOT", "TESTS", "environment", "finish", "run", "start"]

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent


def environment(hash_seed: str = "0", **changes: str | None) -> dict[str, str]:
    """The environment of a fresh process (see the module docstring); *changes* set (or, ``None``, drop) variables."""
    env = {**os.environ, "GLOG_v": "3", "PYTHONHASHSEED": hash_seed}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    for name, value in changes.items():
        if value is None:
            env.pop(name, None)
        else:
            env[name] = value
    return env


def _folder(cwd: Path | str | None) -> Path:
    folder = Path.cwd() if cwd is None else Path(cwd)
    inside = folder.resolve() == ROOT or ROOT in folder.resolve().parents
    if inside:
        raise AssertionError(f"a fresh process must not run in the checkout ({folder}): pass cwd=tmp_path")
    return folder


def start(
    *argv: str | Path, cwd: Path | str | None = None, env: dict[str, str] | None = None, hash_seed: str = "0"
) -> subprocess.Popen:
    """Start ``python *argv*`` (a script and its arguments, ``-c CODE ...`` or ``-m MODULE ...``), text pipes.

    Several started at once run side by side: :func:`finish` each.
    """
    return subprocess.Popen(
        [sys.executable, *map(str, argv)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env if env is not None else environment(hash_seed),
        cwd=_folder(cwd),
    )


def finish(process: subprocess.Popen, timeout: float = 600) -> str:
    """What *process* printed, once it exited with 0 (else the test fails with its stderr's end)."""
    out, err = process.communicate(timeout=timeout)
    assert process.returncode == 0, f"exit {process.returncode}:\n{err[-3000:]}"
    return out


def run(
    *argv: str | Path,
    cwd: Path | str | None = None,
    env: dict[str, str] | None = None,
    hash_seed: str = "0",
    timeout: float = 300,
) -> subprocess.CompletedProcess:
    """Run ``python *argv*`` to its end; its exit code is the caller's to judge (a CLI test expects 1 or 2)."""
    return subprocess.run(
        [sys.executable, *map(str, argv)],
        capture_output=True,
        text=True,
        env=env if env is not None else environment(hash_seed),
        cwd=_folder(cwd),
        timeout=timeout,
    )

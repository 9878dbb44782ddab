"""Start-up of the command line: ``graphaudit --help``, ``--version`` and ``checks``, and whether they import MindSpore.

Each command runs as a subprocess, as a user types it (the ``graphaudit`` console script
next to the running Python; ``python -m graphaudit`` where there is none), ``repeats`` times,
interleaved with ``python -c pass`` (the baseline: the interpreter's own start-up); the
median and the minimum wall time of each are reported. Target: under 0.5 s.

Then each command runs once more under ``python -X importtime``, which lists every module the
process imported: ``mindspore_imported`` is whether ``mindspore`` (or any submodule) is among
them, ``slowest`` the top-level packages with the largest cumulative import time.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from benchmarks.common import stats

COMMANDS = {"--help": ["--help"], "--version": ["--version"], "checks": ["checks"]}
ROOT = Path(__file__).resolve().parent.parent


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


def entry_point() -> tuple[list[str], list[str]]:
    """``(command, command under -X importtime)`` that start ``graphaudit``."""
    script = Path(sys.executable).with_name("graphaudit")
    if script.is_file() and script.read_bytes()[:2] == b"#!":
        return [str(script)], [sys.executable, "-X", "importtime", str(script)]
    return [sys.executable, "-m", "graphaudit"], [sys.executable, "-X", "importtime", "-m", "graphaudit"]


def imports(stderr: str) -> dict[str, int]:
    """``{module: cumulative microseconds}`` from ``-X importtime`` output."""
    out: dict[str, int] = {}
    for line in stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        parts = [part.strip() for part in line[len("import time:") :].split("|")]
        if len(parts) == 3 and parts[1].isdigit():
            out[parts[2]] = int(parts[1])
    return out


def time_startup(repeats: int) -> dict[str, Any]:
    command, importtime = entry_point()
    env = _env()
    runs = {"python -c pass": [sys.executable, "-c", "pass"]}
    runs.update({name: [*command, *args] for name, args in COMMANDS.items()})
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    codes: dict[str, int] = {}
    for _ in range(repeats):
        for name, argv in runs.items():
            start = time.perf_counter()
            proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
            seconds[name].append(time.perf_counter() - start)
            codes[name] = proc.returncode
    checked: dict[str, Any] = {}
    for name, args in COMMANDS.items():
        proc = subprocess.run(
            [*importtime, *args], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env
        )
        modules = imports(proc.stderr)
        top = {m: t for m, t in modules.items() if "." not in m}
        checked[name] = {
            "mindspore_imported": any(m == "mindspore" or m.startswith("mindspore.") for m in modules),
            "modules": len(modules),
            "slowest": sorted(top.items(), key=lambda item: -item[1])[:4],
        }
    return {
        "command": command,
        "phases": {name: stats(times) for name, times in seconds.items()},
        "exit_codes": codes,
        "imports": checked,
    }

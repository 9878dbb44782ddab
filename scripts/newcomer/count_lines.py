"""Run the newcomer's scripts against one or two graphaudit checkouts and tabulate their output.

    python scripts/newcomer/count_lines.py CHECKOUT [CHECKOUT_AFTER] [--out DIR] [--only 01,07]

Each ``NN_*.py`` script next to this file runs in a subprocess with the checkout first on
``PYTHONPATH`` and a fresh temporary directory as its working directory (so neither the
checkout's ``pyproject.toml`` nor anything the script might write touches the checkout).
The table has, per script, the number of lines printed on stdout and the findings counted by
the report's headline (errors/warnings); with two checkouts each cell reads ``before → after``.
A script that fails on a checkout shows ``fails`` and the last line of its stderr below the
table.  ``--out DIR`` keeps each run's stdout and stderr as ``DIR/<label>/<script>.out|.err``.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADLINE = re.compile(r"^graphaudit report\b.*$", re.MULTILINE)
COUNT = re.compile(r"(\d+) (error|warning)s?\b")


@dataclass
class Run:
    lines: int
    errors: int | None
    warnings: int | None
    failure: str | None  # the last stderr line when the script did not run through

    def findings(self) -> str:
        if self.errors is None:
            return "?"
        return f"{self.errors}/{self.warnings}"


def scripts(only: list[str] | None) -> list[Path]:
    found = sorted(p for p in HERE.glob("[0-9][0-9]_*.py"))
    if only:
        found = [p for p in found if p.name[:2] in only]
    return found


def run(script: Path, checkout: Path, timeout: float, keep: Path | None) -> Run:
    env = dict(os.environ, PYTHONPATH=str(checkout), PYTHONDONTWRITEBYTECODE="1")
    with tempfile.TemporaryDirectory(prefix="newcomer-run-") as cwd:
        try:
            done = subprocess.run(
                [sys.executable, str(script)],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=timeout,
            )
            stdout, stderr, rc = done.stdout, done.stderr, done.returncode
        except subprocess.TimeoutExpired as exc:
            stdout = exc.stdout.decode() if isinstance(exc.stdout, bytes) else (exc.stdout or "")
            stderr, rc = f"timed out after {timeout:.0f}s", -1
    if keep is not None:
        keep.mkdir(parents=True, exist_ok=True)
        (keep / f"{script.stem}.out").write_text(stdout)
        (keep / f"{script.stem}.err").write_text(stderr)
    errors = warnings = None
    headline = HEADLINE.search(stdout)
    if headline:
        counts = {kind: int(n) for n, kind in COUNT.findall(headline.group(0))}
        errors, warnings = counts.get("error", 0), counts.get("warning", 0)
    failure = None
    if rc != 0:
        tail = [line for line in stderr.splitlines() if line.strip()]
        failure = tail[-1] if tail else f"exit status {rc}"
    return Run(len(stdout.splitlines()), errors, warnings, failure)


def cell(runs: list[Run], value) -> str:
    return " → ".join("fails" if r.failure else value(r) for r in runs)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("checkouts", nargs="+", type=Path, help="one checkout, or BEFORE AFTER")
    parser.add_argument("--out", type=Path, help="keep each run's stdout/stderr under this directory")
    parser.add_argument("--only", help="comma-separated script numbers, e.g. 01,07")
    parser.add_argument("--timeout", type=float, default=600.0)
    args = parser.parse_args(argv)
    if len(args.checkouts) > 2:
        parser.error("give one checkout, or two (before and after)")
    checkouts = [c.resolve() for c in args.checkouts]
    labels = [label_of(c) for c in checkouts]
    only = args.only.split(",") if args.only else None

    arrow = " → ".join(labels)
    rows = [f"| script | stdout lines ({arrow}) | errors/warnings ({arrow}) |", "| --- | ---: | ---: |"]
    notes = []
    for script in scripts(only):
        runs = []
        for checkout, label in zip(checkouts, labels):
            keep = args.out / label if args.out else None
            result = run(script, checkout, args.timeout, keep)
            runs.append(result)
            if result.failure:
                notes.append(f"- `{script.name}` fails on {label}: `{result.failure}`")
        rows.append(
            f"| `{script.name}` | {cell(runs, lambda r: str(r.lines))} | {cell(runs, Run.findings)} |"
        )
        print(rows[-1], file=sys.stderr, flush=True)  # progress: the audits take a few seconds each
    print("\n".join(rows + (["", *notes] if notes else [])))
    return 0


def label_of(checkout: Path) -> str:
    try:
        sha = subprocess.run(
            ["git", "-C", str(checkout), "rev-parse", "--short", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return checkout.name
    return sha or checkout.name


if __name__ == "__main__":
    sys.exit(main())

"""Each sample of ``samples/`` audited once per test session, for every test that reads it.

A sample's audit is a pure function of the sample (seeded, isolated: the audit changes nothing),
so the tests that only read its report — its findings (tests/test_samples.py), the baseline the
metamorphic forms are compared with, its JSON and SARIF — share one audit instead of running it
again each. Tests that exercise a path of their own (the command line, a transformed network)
still run it themselves.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType
from typing import Any, NamedTuple

from seeds import seed_everything

import graphaudit
from graphaudit.report.sarif import to_sarif

SAMPLES = Path(__file__).resolve().parent.parent / "samples"
#: The mark a bad sample puts at the end of the line its findings' SARIF locations point at.
SARIF_MARK = "# <- SARIF"


def is_slow(check_id: str) -> bool:
    """Whether *check_id*'s samples say they are slow (``SLOW = True``: a real msrun job, a training)."""
    text = (SAMPLES / check_id / "bad.py").read_text(encoding="utf-8")
    return any(line.startswith("SLOW = True") for line in text.splitlines())


def sample_ids() -> list[Any]:
    """Every check's ID, as pytest parameters, those whose samples are slow marked ``slow``."""
    import pytest

    from graphaudit.checks import all_checks

    return [pytest.param(c, marks=pytest.mark.slow) if is_slow(c) else c for c in sorted(all_checks())]


#: Every check's ID as a pytest parameter, marked ``slow`` when its samples say so.
IDS = sample_ids()


def marked_lines(path: Path) -> set[int]:
    """The numbers of the lines of the sample *path* that end with :data:`SARIF_MARK`."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return {number for number, line in enumerate(lines, 1) if line.rstrip().endswith(SARIF_MARK)}


class Audited(NamedTuple):
    """A sample's module, the keyword arguments its ``build()`` returned, and their audit."""

    module: ModuleType
    kwargs: dict[str, Any]
    report: graphaudit.Report


_AUDITED: dict[Path, Audited] = {}


def load(path: Path, *, name: str | None = None) -> ModuleType:
    """Import a sample file under a module name of its own (its classes importable by it).

    *name* is the module's name (default ``sample_<folder>_<stem>``): a rewritten copy of a
    sample takes another, so that its classes do not replace the original's.
    """
    name = name or f"sample_{path.parent.name}_{path.stem}"
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def audited(check_id: str, which: str) -> Audited:
    """``samples/<check_id>/<which>.py`` built and audited, once per session."""
    path = (SAMPLES / check_id / f"{which}.py").resolve()
    if path not in _AUDITED:
        seed_everything()  # the same audit whichever test asks first
        module = load(path)
        kwargs = module.build()
        given = dict(kwargs)
        _AUDITED[path] = Audited(module, kwargs, graphaudit.audit(given.pop("net"), **given))
    return _AUDITED[path]


def located_sample_log(path: Path) -> tuple[graphaudit.Report, dict]:
    """A sample's report and its log with every result located, as the command line makes it."""
    module, kwargs, report = audited(path.parent.name, path.stem)
    log = to_sarif(
        report,
        artifact_uri="factory.py",
        start_line=1,
        locate=True,
        optimizer=kwargs.get("optimizer"),
        factories=[module.build],
    )
    return report, log

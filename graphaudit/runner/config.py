"""Configuration like a linter's: ``[tool.graphaudit]`` in ``pyproject.toml``, and the same in code.

::

    [tool.graphaudit]
    select = ["GA1", "GA2", "GA401"]   # check IDs, ID prefixes or names; default: every check
    ignore = ["GA313"]                 # never report these (they still run, and are listed as ignored)

    [tool.graphaudit.severity]         # report a check at another severity
    GA102 = "warning"

    [[tool.graphaudit.per-path]]       # ignore some checks for some cells or parameters
    path = "backbone.*"                # a glob over a finding's subjects (cell paths, parameter names)
    ignore = ["GA601", "GA602"]
    reason = "the backbone's weights are loaded from a checkpoint after the audit"

:func:`graphaudit.audit` reads the nearest ``pyproject.toml`` with a ``[tool.graphaudit]``
table, from the working folder up (or the file ``GRAPHAUDIT_CONFIG`` names, which the pytest
plugin sets to the rootdir's), and takes ``select=``, ``ignore=`` and ``config=`` (a path, a
:class:`Config`, or ``False`` for none) on top of it; ``graphaudit audit`` does the same, with
``--select``, ``--ignore``, ``--config FILE`` and ``--no-config``. A finding that the
configuration hides is never dropped silently: it is in ``report.suppressed`` with the reason,
and in the JSON (``suppressions``) and SARIF (``suppressions`` of the result) reports.
Unknown IDs and keys are errors, with "did you mean".

Example:
    >>> config = Config.from_mapping({"ignore": ["GA313"], "severity": {"GA102": "warning"}}, source="example")
    >>> config.suppression(Finding("GA313", "kernel-larger-than-input", "warning", "conv", "m", "f"))
    'ignored by ignore = ["GA313"] in example'
    >>> config.severity_of(Finding("GA102", "shared-parameter-inventory", "info", "x", "m", "f"))
    'warning'
"""

from __future__ import annotations

import copy
import dataclasses
import functools
import os
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from pathlib import Path
from typing import Any

from graphaudit.errors import ArgumentError
from graphaudit.findings import SEVERITIES, Finding
from graphaudit.report import Report, Suppressed
from graphaudit.suggest import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["ENVIRONMENT", "Config", "PathIgnore", "configured", "find_config", "load_config"]

ENVIRONMENT = "GRAPHAUDIT_CONFIG"  # a pyproject.toml (or any TOML with [tool.graphaudit]) to read
_KEYS = ("select", "ignore", "severity", "per-path")
_PATH_KEYS = ("path", "ignore", "reason")


@dataclass(frozen=True)
class PathIgnore:
    """Checks ignored for the findings whose every subject matches the glob *path*."""

    path: str
    ignore: tuple[str, ...]
    reason: str


@dataclass(frozen=True)
class Config:
    """What to report: ``select``, ``ignore``, ``severity`` overrides and ``per_path`` ignores."""

    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    severity: Mapping[str, str] = field(default_factory=dict)
    per_path: tuple[PathIgnore, ...] = ()
    source: str = "audit()"

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any], *, source: str) -> Config:
        """The configuration a ``[tool.graphaudit]`` table (or ``audit()``'s keywords) declares."""
        if not isinstance(data, Mapping):
            raise ArgumentError(f"{source}: [tool.graphaudit] must be a table, got {type(data).__name__}")
        for key in data:
            if key not in _KEYS:
                raise ArgumentError(
                    f"{source}: [tool.graphaudit] has no key {key!r}{did_you_mean(key, _KEYS)} "
                    f"(it takes {', '.join(_KEYS)})"
                )
        severity = data.get("severity", {})
        if not isinstance(severity, Mapping):
            raise ArgumentError(f'{source}: severity must be a table of ID = "error"|"warning"|"info"')
        for check_id, level in severity.items():
            _known(check_id, source, "severity", prefix=False)
            if level not in SEVERITIES:
                raise ArgumentError(
                    f"{source}: severity.{check_id} = {level!r}: a severity is one of {', '.join(SEVERITIES)}"
                )
        rules = []
        for index, rule in enumerate(data.get("per-path", ())):
            where = f"{source}: per-path[{index}]"
            if not isinstance(rule, Mapping) or "path" not in rule or "ignore" not in rule:
                raise ArgumentError(f'{where} needs path = "glob" and ignore = [IDs] (and a reason)')
            for key in rule:
                if key not in _PATH_KEYS:
                    raise ArgumentError(
                        f"{where} has no key {key!r}{did_you_mean(key, _PATH_KEYS)} (it takes "
                        f"{', '.join(_PATH_KEYS)})"
                    )
            ids = _ids(rule["ignore"], where, "ignore")
            rules.append(PathIgnore(str(rule["path"]), ids, str(rule.get("reason", "no reason given"))))
        return cls(
            select=_ids(data.get("select", ()), source, "select"),
            ignore=_ids(data.get("ignore", ()), source, "ignore"),
            severity={_canonical(k): v for k, v in severity.items()},
            per_path=tuple(rules),
            source=source,
        )

    def with_keywords(self, *, select: Any = None, ignore: Any = None) -> Config:
        """This configuration with ``audit(select=..., ignore=...)`` on top (a select replaces, ignores add)."""
        return Config(
            select=self.select if select is None else _ids(select, "audit()", "select"),
            ignore=(*self.ignore, *(() if ignore is None else _ids(ignore, "audit()", "ignore"))),
            severity=self.severity,
            per_path=self.per_path,
            source=self.source if select is None and ignore is None else f"{self.source} and audit()",
        )

    def suppression(self, finding: Finding) -> str | None:
        """Why the configuration hides *finding*, or ``None`` when it is reported."""
        # A finding another check folded into (runner.merge) is also that check's: select=["GA63"]
        # shows GA709's epsilon finding that GA635 confirmed against the original, not hides it.
        ids = (finding.check_id, *finding.confirmed_by)
        if self.select and not any(_matches(i, entry) for i in ids for entry in self.select):
            return f"not selected by select = {_toml_list(self.select)} in {self.source}"
        hit = [entry for entry in self.ignore if _matches(finding.check_id, entry)]
        if hit:
            return f"ignored by ignore = {_toml_list(hit)} in {self.source}"
        for rule in self.per_path:
            subjects = {finding.subject, *finding.subjects}
            if any(_matches(finding.check_id, entry) for entry in rule.ignore) and all(
                fnmatchcase(s, rule.path) for s in subjects
            ):
                return f"ignored for {rule.path!r} by per-path in {self.source}: {rule.reason}"
        return None

    def severity_of(self, finding: Finding) -> str:
        """The severity *finding* is reported at: the configured one, else its own."""
        return self.severity.get(finding.check_id, finding.severity)


def _canonical(key: str) -> str:
    from graphaudit.checks import find_check

    check = find_check(key)
    return check.check_id if check is not None else key


def _known(entry: str, source: str, key: str, *, prefix: bool = True) -> None:
    from graphaudit.checks import all_checks

    checks = all_checks()
    names = [c.name for c in checks.values()]
    upper = entry.upper() if isinstance(entry, str) else entry
    if not isinstance(entry, str):
        raise ArgumentError(f"{source}: {key} takes check IDs, prefixes or names, got {entry!r}")
    if upper in checks or entry in names:
        return
    if prefix and upper.startswith("GA") and any(check_id.startswith(upper) for check_id in checks):
        return
    raise ArgumentError(
        f"{source}: {key} names no check {entry!r}{did_you_mean(upper, [*checks, *names])} "
        "(graphaudit checks lists them)"
    )


def _ids(value: Any, source: str, key: str) -> tuple[str, ...]:
    entries = [value] if isinstance(value, str) else list(value) if isinstance(value, Iterable) else None
    if entries is None:
        raise ArgumentError(f"{source}: {key} takes a list of check IDs, prefixes or names, got {value!r}")
    for entry in entries:
        _known(entry, source, key)
    return tuple(_canonical(e) if not _is_prefix(e) else e.upper() for e in entries)


def _is_prefix(entry: str) -> bool:
    from graphaudit.checks import all_checks

    return entry.upper().startswith("GA") and entry.upper() not in all_checks()


def _matches(check_id: str, entry: str) -> bool:
    return check_id == entry or (_is_prefix(entry) and check_id.startswith(entry))


def _toml_list(entries: Iterable[str]) -> str:
    return "[" + ", ".join(f'"{e}"' for e in entries) + "]"


@functools.lru_cache(maxsize=16)
def _parsed_toml(path: str, stamp: tuple[int, int]) -> dict[str, Any]:
    return tomllib.loads(Path(path).read_text(encoding="utf-8"))


def _read_toml(file: Path) -> dict[str, Any]:
    """*file*'s TOML, parsed again only when its modification time or size changed: every audit
    looks for its configuration, and parsing a project's pyproject.toml twice was ~3 ms of a
    structure-only audit of resnet50 (~30 ms). Shared: copy what you keep or change."""
    stat = file.stat()
    return _parsed_toml(str(file), (stat.st_mtime_ns, stat.st_size))


def load_config(path: str | os.PathLike[str]) -> Config:
    """The ``[tool.graphaudit]`` table of the TOML file *path* (an empty configuration without one)."""
    file = Path(path)
    try:
        data = _read_toml(file)
    except OSError as err:
        raise ArgumentError(f"cannot read the configuration {file}: {err}") from err
    except tomllib.TOMLDecodeError as err:
        raise ArgumentError(f"{file}: not valid TOML: {err}") from err
    table = data.get("tool", {}).get("graphaudit")
    return (
        Config(source=str(file))
        if table is None
        # A copy of the table only (a whole pyproject.toml's copy was ~0.4 ms an audit).
        else Config.from_mapping(copy.deepcopy(table), source=f"{file} [tool.graphaudit]")
    )


def find_config(start: str | os.PathLike[str] | None = None) -> Config:
    """The configuration in force: ``GRAPHAUDIT_CONFIG``'s file, else the nearest pyproject.toml with one.

    Looks from *start* (the working folder) up; a ``pyproject.toml`` without a
    ``[tool.graphaudit]`` table is passed over, as ruff passes over one without ``[tool.ruff]``.
    """
    named = os.environ.get(ENVIRONMENT)
    if named:
        return load_config(named)
    folder = Path(start or Path.cwd()).resolve()
    for candidate in (folder, *folder.parents):
        pyproject = candidate / "pyproject.toml"
        if pyproject.is_file():
            try:
                has_table = "graphaudit" in _read_toml(pyproject).get("tool", {})
            except (OSError, tomllib.TOMLDecodeError):
                continue
            if has_table:
                return load_config(pyproject)
    return Config(source="no configuration")


def configured(report: Report, config: Config) -> Report:
    """*report* as *config* says to report it: hidden findings moved to ``suppressed``, severities overridden.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> block = nn.Dense(2, 2)
        >>> report = graphaudit.audit(nn.SequentialCell([block, block]), config=False)
        >>> quiet = configured(report, Config(ignore=("GA101",), source="an example"))
        >>> [f.check_id for f in quiet.findings], [s.finding.check_id for s in quiet.suppressed], quiet.ok
        ([], ['GA101'], True)
    """
    kept: list[Finding] = []
    hidden = list(report.suppressed)
    for finding in report.findings:
        reason = config.suppression(finding)
        if reason is not None:
            hidden.append(Suppressed(finding, reason))
            continue
        severity = config.severity_of(finding)
        kept.append(
            finding if severity == finding.severity else dataclasses.replace(finding, severity=severity)
        )
    return dataclasses.replace(report, findings=kept, suppressed=hidden)

"""[tool.graphaudit] and audit(select=, ignore=, config=): configured like a linter, never silently."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest
import twins
from mindspore import nn
from nets import Repeated

import graphaudit
from graphaudit.cli import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, main
from graphaudit.errors import ArgumentError
from graphaudit.report.sarif import to_sarif
from graphaudit.runner.config import ENVIRONMENT, Config

FACTORY = "from nets import Repeated\n\ndef build():\n    return Repeated()\n"


def project(folder: Path, table: str) -> Path:
    (folder / "pyproject.toml").write_text(f'[project]\nname = "mine"\n\n{textwrap.dedent(table)}')
    return folder / "pyproject.toml"


@pytest.fixture(autouse=True)
def _no_named_config(monkeypatch):
    monkeypatch.delenv(ENVIRONMENT, raising=False)


def test_the_nearest_pyproject_hides_an_ignored_check_and_says_why(tmp_path, monkeypatch):
    pyproject = project(tmp_path, '[tool.graphaudit]\nignore = ["GA101"]\n')
    (tmp_path / "sub").mkdir()
    monkeypatch.chdir(tmp_path / "sub")  # found from a folder below, as ruff finds its table
    report = graphaudit.audit(Repeated())
    assert report.ok and not report.by_check("GA101")
    [hidden] = report.suppressed
    assert hidden.finding.check_id == "GA101"
    assert hidden.reason == f'ignored by ignore = ["GA101"] in {pyproject} [tool.graphaudit]'
    data = json.loads(report.to_json())
    assert data["suppressions"][0]["finding"]["check_id"] == "GA101" and data["suppressions"][0]["reason"]
    sarif = to_sarif(report)["runs"][0]["results"]
    [result] = [r for r in sarif if r["ruleId"] == "GA101"]
    assert result["suppressions"] == [{"kind": "external", "justification": hidden.reason}]
    assert "SUPPRESSED: 1 finding (GA101)" in str(report)
    assert graphaudit.audit(Repeated(), config=False).by_check("GA101")  # config=False: none read


def test_severity_overrides_select_and_per_path_ignores(tmp_path):
    pyproject = project(
        tmp_path,
        """
        [tool.graphaudit]
        select = ["GA1", "GA2"]

        [tool.graphaudit.severity]
        GA101 = "warning"

        [[tool.graphaudit.per-path]]
        path = "layers*"
        ignore = ["repeated-cell-in-container"]
        reason = "the repeats are the design"
        """,
    )
    report = graphaudit.audit(Repeated(), config=pyproject)
    [hidden] = report.suppressed
    assert hidden.reason.endswith(
        "per-path in " + f"{pyproject} [tool.graphaudit]: the repeats are the design"
    )
    config = Config.from_mapping({"severity": {"GA101": "warning"}, "select": ["GA1"]}, source="test")
    warned = graphaudit.audit(Repeated(), config=config)
    assert warned.ok and [f.severity for f in warned.by_check("GA101")] == ["warning"]
    only_optimizer = graphaudit.audit(Repeated(), config=config, select=["GA2"])
    assert not only_optimizer.findings
    assert only_optimizer.suppressed[0].reason.startswith('not selected by select = ["GA2"]')


def test_keywords_in_code_add_to_the_file(tmp_path, monkeypatch):
    project(tmp_path, '[tool.graphaudit]\nignore = ["GA313"]\n')
    monkeypatch.chdir(tmp_path)
    report = graphaudit.audit(Repeated(), ignore=["GA101"])
    assert [s.finding.check_id for s in report.suppressed] == ["GA101"] and report.ok


@pytest.mark.parametrize(
    ("table", "message"),
    [
        ({"ignroe": ["GA101"]}, "did you mean 'ignore'"),
        ({"ignore": ["GA1O1"]}, "did you mean 'GA101'"),
        ({"select": ["GA9x9"]}, "names no check 'GA9x9'"),
        ({"severity": {"GA101": "fatal"}}, "a severity is one of error, warning, info"),
        ({"per-path": [{"path": "x.*"}]}, 'needs path = "glob" and ignore = [IDs]'),
        (
            {"per-path": [{"path": "x", "ignore": ["GA101"], "reasn": "z"}]},
            "has no key 'reasn'; did you mean 'reason'",
        ),
    ],
)
def test_unknown_keys_and_ids_are_errors_with_did_you_mean(table, message):
    with pytest.raises(ArgumentError, match=message.replace("[", r"\[").replace("(", r"\(")):
        Config.from_mapping(table, source="pyproject.toml")


def test_a_bad_table_in_the_file_is_an_error_naming_the_file(tmp_path):
    pyproject = project(tmp_path, '[tool.graphaudit]\nignore = ["GA1O1"]\n')
    with pytest.raises(ArgumentError, match=str(pyproject)):
        graphaudit.audit(nn.Dense(2, 2), config=pyproject)
    with pytest.raises(TypeError, match="config= to be a path"):
        graphaudit.audit(nn.Dense(2, 2), config=3)


def test_the_command_line_reads_the_table_and_takes_flags(tmp_path, monkeypatch, capsys):
    tests = Path(__file__).resolve().parent
    monkeypatch.syspath_prepend(str(tests))
    (tmp_path / "model.py").write_text(FACTORY)
    monkeypatch.chdir(tmp_path)
    assert main(["audit", "model.py:build"]) == EXIT_FINDINGS
    assert main(["audit", "model.py:build", "--ignore", "GA101"]) == EXIT_CLEAN
    assert "SUPPRESSED: 1 finding (GA101)" in capsys.readouterr().out
    project(tmp_path, '[tool.graphaudit]\nignore = ["GA101"]\n')
    assert main(["audit", "model.py:build"]) == EXIT_CLEAN
    assert main(["audit", "model.py:build", "--no-config"]) == EXIT_FINDINGS
    capsys.readouterr()
    assert main(["audit", "model.py:build", "--select", "GA1O1"]) == EXIT_USAGE
    assert "did you mean 'GA101'" in capsys.readouterr().err


def test_the_pytest_plugin_reads_the_rootdirs_table(tmp_path):
    project(tmp_path, '[tool.graphaudit]\nignore = ["GA101"]\n')
    tests = Path(__file__).resolve().parent
    (tmp_path / "test_mine.py").write_text(
        textwrap.dedent(f"""
            import os, sys
            sys.path.insert(0, {str(tests)!r})
            import graphaudit
            from nets import Repeated

            def test_clean(tmp_path):
                os.chdir(tmp_path)  # wherever the test runs, the rootdir's table holds
                report = graphaudit.audit(Repeated())
                assert report.ok and [s.finding.check_id for s in report.suppressed] == ["GA101"]
        """)
    )
    command = ["-m", "pytest", "-q", "-p", "no:cacheprovider", tmp_path / "test_mine.py"]
    done = twins.run(*command, cwd=tmp_path, env=twins.environment(**{ENVIRONMENT: None}))
    assert done.returncode == 0, done.stdout + done.stderr

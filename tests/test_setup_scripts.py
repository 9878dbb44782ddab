"""The installer's output: pip's noise dropped when an install succeeds, everything shown when it fails."""

import subprocess
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

# What pip 23-26 printed on this machine's installs (scripts/setup.sh before it was quieted).
NOISE = """\
WARNING: Location 'file:///opt/pypi-more/simple/pip/' is ignored: it is neither a file nor a directory.
  /tmp/pip-build-env-x/overlay/lib/python3.11/site-packages/setuptools/command/editable_wheel.py:354: BuildBackendWarning: Editable installation.
  !!

          ********************************************************************************
          Please be careful with folders in your working directory with the same
          name as your package as they may take precedence during imports.
          ********************************************************************************

  !!
    with strategy, WheelFile(wheel_path, "w") as wheel_obj:
ERROR: pip's dependency resolver does not currently take into account all the packages that are installed.
mindyolo 0.5.0 requires mindspore<=2.3, but you have mindspore 2.10.0 which is incompatible.
"""
REAL = "WARNING: the package somepkg was yanked: it corrupts data\n"


def run_quiet_pip(tmp_path: Path, output: str, status: int) -> subprocess.CompletedProcess:
    fake_python = tmp_path / "python"
    (tmp_path / "pip-output.txt").write_text(output)
    fake_python.write_text(f"#!/bin/sh\ncat {tmp_path / 'pip-output.txt'} >&2\nexit {status}\n")
    fake_python.chmod(0o755)
    script = textwrap.dedent(f"""
        set -euo pipefail
        . {ROOT / "scripts" / "quiet-pip.sh"}
        quiet_pip {fake_python} somepkg
        echo "after install" >&2
    """)
    return subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=False)


def test_a_successful_install_shows_only_what_needs_reading(tmp_path):
    result = run_quiet_pip(tmp_path, NOISE + REAL, 0)
    assert result.returncode == 0
    assert result.stderr == REAL + "after install\n"


def test_a_failed_install_shows_everything_pip_said_and_stops(tmp_path):
    result = run_quiet_pip(tmp_path, NOISE + "ERROR: No matching distribution found for somepkg\n", 1)
    assert result.returncode == 1
    assert NOISE in result.stderr
    assert "No matching distribution found for somepkg" in result.stderr
    assert "failed (exit 1)" in result.stderr
    assert "after install" not in result.stderr


def test_every_setup_script_installs_through_quiet_pip():
    for name in ("setup.sh", "setup-zoos.sh", "test-oldest.sh"):
        text = (ROOT / "scripts" / name).read_text()
        assert "quiet-pip.sh" in text, name
        assert "-m pip install" not in text, f"{name} calls pip directly: its noise would be shown"


def _fake(path: Path, output: str, status: int) -> None:
    (path.parent / f"{path.name}-output.txt").write_text(output)
    path.write_text(
        f'#!/bin/sh\necho {path.name} "$@" >> {path.parent / "calls.txt"}\ncat {path.parent / f"{path.name}-output.txt"} >&2\nexit {status}\n'
    )
    path.chmod(0o755)


def run_with_uv(tmp_path: Path, uv_status: int, pip_status: int = 0) -> subprocess.CompletedProcess:
    """quiet_pip with a uv beside the interpreter (as fast_installer leaves it), both fakes."""
    _fake(tmp_path / "uv", "error: no index reachable\n", uv_status)
    _fake(tmp_path / "python", REAL, pip_status)
    script = f". {ROOT / 'scripts' / 'quiet-pip.sh'}\nquiet_pip {tmp_path / 'python'} somepkg\n"
    return subprocess.run(
        ["bash", "-c", f"set -euo pipefail\n{script}"], capture_output=True, text=True, check=False
    )


def test_uv_installs_when_it_is_beside_the_interpreter(tmp_path):
    result = run_with_uv(tmp_path, uv_status=0)
    assert result.returncode == 0, result.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert calls == [f"uv pip install -q --python {tmp_path / 'python'} somepkg"]


def test_a_failing_uv_falls_back_to_pip_and_says_so(tmp_path):
    result = run_with_uv(tmp_path, uv_status=2)
    assert result.returncode == 0, result.stderr
    assert "setup: uv failed (exit 2: error: no index reachable); installing with pip" in result.stderr
    assert REAL in result.stderr
    calls = (tmp_path / "calls.txt").read_text().splitlines()
    assert [c.split()[0] for c in calls] == ["uv", "python"]
    assert calls[1] == "python -m pip install -q --disable-pip-version-check somepkg"


def test_when_both_fail_everything_pip_said_is_shown(tmp_path):
    result = run_with_uv(tmp_path, uv_status=2, pip_status=1)
    assert result.returncode == 1
    assert "failed (exit 1); its whole output is above" in result.stderr

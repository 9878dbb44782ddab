"""Text output cannot be forged: names holding newlines, ``\\r``, ESC sequences or direction
overrides are escaped in ``str(report)``, ``graphaudit audit``'s text, logs and the probe's text.

A cell name can hold any character (``insert_child_to_cell``), and so can a parameter name:
each payload below is put in both, then every line of every text output must be one the
report itself wrote (no forged ``OK: ...`` line, no raw control byte).
"""

from __future__ import annotations

import logging
import sys
import unicodedata

import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.cli import main
from graphaudit.findings import printable

FORGED = "OK (0 errors, 0 warnings, 0 info); no findings"
PAYLOADS = [
    f"a\n{FORGED}\n",
    f"b\r{FORGED}",
    "c\x1b[2J\x1b[H",  # clear the screen, cursor home
    "d\x1b]0;pwned\x07",  # set the terminal title
    "e\x1b[31mred\x1b[0m",
    "f\u202etxt-exe",  # right-to-left override
    "g\u2066isolate\u2069\u200f",
    "h\x00\x7f\x85\u2028\u2029\t",
]


def _unsafe(text: str) -> list[str]:
    """The characters of *text* a terminal would act on (newlines separate lines)."""
    return [c for c in text if c != "\n" and (not c.isprintable() or unicodedata.category(c) == "Cf")]


class Hostile(nn.Cell):
    """One ReLU child and one Dense head per payload, each named by it; the heads are left out of the optimizer."""

    def __init__(self) -> None:
        super().__init__()
        self.keys = [f"k{i}_{p}" for i, p in enumerate(PAYLOADS)]
        for i, key in enumerate(self.keys):
            nn.Cell.insert_child_to_cell(self, key, nn.Dense(2, 2))
            getattr(self, key).weight.name = f"w{i}_{PAYLOADS[i]}"

    def construct(self, x: Tensor) -> Tensor:
        out = x
        for key in self.keys:
            out = self._cells[key](out)
        return out


def hostile():
    net = Hostile()
    return net, nn.SGD(net._cells[net.keys[0]].trainable_params())  # the other heads: GA201 errors


def _check(text: str) -> None:
    assert not _unsafe(text), sorted(set(_unsafe(text)))
    assert not any(line.lstrip().startswith("OK") for line in text.splitlines()), text


@pytest.mark.parametrize("payload", PAYLOADS)
def test_printable_escapes_each_payload(payload: str) -> None:
    escaped = printable(payload)
    assert not _unsafe(escaped) and "\n" not in escaped
    assert escaped.encode("ascii", "backslashreplace").decode("unicode_escape") == payload


def test_report_text_and_log_are_escaped(caplog) -> None:
    net, optimizer = hostile()
    report = graphaudit.audit(net, optimizer, inputs=Tensor(np.ones((1, 2), np.float32)))
    assert not report.ok and report.by_check("GA201")
    _check(str(report))
    _check(report.text(audience="cli"))
    for finding in report.findings:
        _check(str(finding))
    with caplog.at_level(logging.INFO, logger="graphaudit"):
        logging.getLogger("graphaudit").info("%s", report)
    _check(caplog.text)


def test_cli_text_output_is_escaped(tmp_path, capsys, monkeypatch) -> None:
    module = tmp_path / "ga_hostile_names.py"
    module.write_text(f"from {__name__} import hostile\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.syspath_prepend(str(__import__("pathlib").Path(__file__).parent))
    code = main(["audit", f"{module}:hostile", "--input", "1x2"])
    out, err = capsys.readouterr()
    assert code == 1, (out, err)
    assert "GA201" in out
    _check(out)
    _check(err)
    sys.modules.pop("ga_hostile_names", None)


def test_probe_text_is_escaped() -> None:
    from graphaudit.probe import run_probe

    net, optimizer = hostile()
    x, y = Tensor(np.ones((2, 2), np.float32)), Tensor(np.zeros((2, 2), np.float32))
    result = run_probe(net, optimizer, nn.MSELoss(), (x,), y)
    _check(result.table())
    _check(str(result))

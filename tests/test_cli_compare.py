"""``graphaudit compare rank0.json rank1.json ...``: output, formats and exit codes."""

from __future__ import annotations

import json

import numpy as np
import pytest
import twins
from mindspore import Tensor, nn

from graphaudit.cli import EXIT_CLEAN, EXIT_FINDINGS, EXIT_USAGE, main
from graphaudit.fingerprint import fingerprint


class Net(nn.Cell):
    def __init__(self, head_seed: int = 1) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8, weight_init=_init(0, (8, 4)), bias_init="zeros")
        self.head = nn.Dense(8, 2, weight_init=_init(head_seed, (2, 8)), bias_init="zeros")

    def construct(self, x):
        return self.head(self.backbone(x))


def _init(seed: int, shape: tuple[int, int]) -> Tensor:
    return Tensor(np.random.default_rng(seed).normal(size=shape).astype(np.float32))


@pytest.fixture
def ranks(tmp_path):
    """rank0..rank2.json of one world: rank 2's head differs."""
    paths = []
    for rank, seed in enumerate([1, 1, 2]):
        path = tmp_path / f"rank{rank}.json"
        fingerprint(Net(seed), rank=rank, world_size=3).save(path)
        paths.append(str(path))
    return paths


def test_identical_complete_world_exits_0(tmp_path, capsys):
    files = []
    for rank in range(2):
        files.append(str(tmp_path / f"rank{rank}.json"))
        fingerprint(Net(), rank=rank, world_size=2).save(files[-1])
    assert main(["compare", *files]) == EXIT_CLEAN
    out = capsys.readouterr().out
    assert "identical: every parameter has the same content in all 2 fingerprints" in out
    assert "rank 0:" in out and "rank 1:" in out and "4 parameters" in out


def test_differences_exit_1_and_name_the_parameter_and_ranks(ranks, capsys):
    assert main(["compare", *ranks]) == EXIT_FINDINGS
    out = capsys.readouterr().out
    assert "GA801 [error] head.weight:" in out
    assert "ranks 0, 1 agree on" in out and "rank 2 has" in out
    assert "backbone.weight" not in out.split("\n\n", 1)[1]
    assert "1 parameter not identical" in out


def test_json_format_and_output_file(ranks, tmp_path, capsys):
    target = tmp_path / "out" / "compare.json"
    assert main(["compare", *ranks, "--format", "json", "-o", str(target)]) == EXIT_FINDINGS
    data = json.loads(target.read_text())
    assert data["identical"] is False and data["parameters"] == 4
    assert [fp["rank"] for fp in data["fingerprints"]] == [0, 1, 2]
    assert [(f["check_id"], f["subject"]) for f in data["findings"]] == [("GA801", "head.weight")]
    assert "wrote the comparison" in capsys.readouterr().err


def test_a_world_warning_alone_does_not_fail(tmp_path, capsys):
    files = []
    for rank in (0, 2):
        files.append(str(tmp_path / f"rank{rank}.json"))
        fingerprint(Net(), rank=rank, world_size=4).save(files[-1])
    assert main(["compare", *files]) == EXIT_CLEAN
    out = capsys.readouterr().out
    assert "GA801 [warning] (world)" in out and "ranks 1, 3 not compared" in out


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (None, "cannot read the fingerprint file"),
        ("not json", "is not JSON"),
        ('{"a": 1}', "is not a graphaudit fingerprint"),
    ],
)
def test_unreadable_files_exit_2(ranks, tmp_path, capsys, content, message):
    bad = tmp_path / "bad.json"
    if content is not None:
        bad.write_text(content)
    assert main(["compare", ranks[0], str(bad)]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_one_file_or_none_is_a_usage_error(ranks, capsys):
    assert main(["compare", ranks[0]]) == EXIT_USAGE
    assert "at least two fingerprint files" in capsys.readouterr().err
    assert main(["compare"]) == EXIT_USAGE


def test_the_comparison_behind_the_command(ranks):
    from graphaudit.fingerprint import Fingerprint

    comparison = _comparison([Fingerprint.load(path) for path in ranks])
    assert not comparison.identical and comparison.parameters == 4
    assert [f.subject for f in comparison.differing] == ["head.weight"]
    assert json.loads(comparison.to_json())["identical"] is False
    assert comparison.to_dict()["fingerprints"][2]["file"] == ranks[2]
    complete = _comparison([Fingerprint.load(path) for path in ranks[:2]])
    assert [f.subject for f in complete.findings] == ["(world)"]  # ranks 0 and 1 of 3: the world warning
    assert complete.identical  # ...which alone does not make them differ


def test_help_lists_compare(capsys):
    assert main(["--help"]) == EXIT_CLEAN
    assert "compare" in capsys.readouterr().out
    assert main(["compare", "--help"]) == EXIT_CLEAN
    assert "FINGERPRINT.json" in capsys.readouterr().out


def test_as_a_subprocess(ranks):
    done = twins.run("-m", "graphaudit", "compare", *ranks)
    assert done.returncode == EXIT_FINDINGS, done.stderr
    assert "head.weight" in done.stdout
    assert "Exception ignored" not in done.stderr, done.stderr


def _comparison(fingerprints):
    from graphaudit.fingerprint import compare
    from graphaudit.report.compare import Comparison

    return Comparison(tuple(fingerprints), tuple(compare(fingerprints)))

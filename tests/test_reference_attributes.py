"""GA635-GA639 on planted attribute bugs: each found at its cell, from a dump and from an ONNX export; twins silent.

The original is ``scripts/references/make_attributes.py``'s small CNN (a conv padded by 1,
BatchNorm, the exact GELU, a max pool with ceil_mode, an average pool without the padding
counted, a LayerNorm of eps 1e-12, a Dropout of 0.1), dumped into ``samples/GA635/original/``
with each module's attributes and exported to ``tests/references/planted/attributes.onnx``.
Each port is its faithful MindSpore port with one attribute planted the way ports get it wrong.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest
from mindspore import Tensor, mint, nn

import graphaudit
from graphaudit.capture.reference.attributes import Layer, compare_layers, port_layer, torch_layer
from graphaudit.reference import write_safetensors

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "samples" / "GA635" / "original"
ONNX = ROOT / "tests" / "references" / "planted" / "attributes.onnx"
CHECKS = ["GA635", "GA636", "GA637", "GA638", "GA639"]


class Port(nn.Cell):
    """The faithful port, or the same with one planted *bug*."""

    def __init__(self, bug: str = "") -> None:
        super().__init__()
        self.bug = bug
        if bug == "conv-valid":
            self.conv = nn.Conv2d(3, 8, 3, pad_mode="valid", has_bias=True)
        elif bug == "conv-same":  # 'same' at stride 1 pads 1 on each side for a 3x3 kernel: the original's
            self.conv = nn.Conv2d(3, 8, 3, pad_mode="same", has_bias=True)
        else:
            self.conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = {
            "momentum-literal": nn.BatchNorm2d(8, momentum=0.1),
            "mint": mint.nn.BatchNorm2d(8),
            "mint-momentum": mint.nn.BatchNorm2d(8, momentum=0.9),
        }.get(bug, nn.BatchNorm2d(8, momentum=0.9))
        self.act = {"gelu-tanh": nn.GELU(), "mint": mint.nn.GELU(), "relu": nn.ReLU()}.get(
            bug, nn.GELU(approximate=False)
        )
        if bug == "pool-kind":
            self.pool = nn.AvgPool2d(3, 2, pad_mode="pad", padding=1, ceil_mode=True)
        else:
            self.pool = nn.MaxPool2d(3, 2, pad_mode="pad", padding=1, ceil_mode=bug != "ceil-mode")
        self.avg = nn.AvgPool2d(3, 1, pad_mode="pad", padding=1, count_include_pad=bug == "count-include-pad")
        self.fc = nn.Dense(8 * 5 * 5, 16)
        self.norm = {
            "layernorm-eps": nn.LayerNorm((16,), epsilon=1e-5),
            "mint": mint.nn.LayerNorm(16, eps=1e-12),
        }.get(bug, nn.LayerNorm((16,), epsilon=1e-12))
        self.drop = {"keep-prob-as-p": nn.Dropout(p=0.9), "keep-prob": nn.Dropout(keep_prob=0.9)}.get(
            bug, mint.nn.Dropout(0.1) if bug == "mint" else nn.Dropout(p=0.1)
        )
        self.head = nn.Dense(16, 4)

    def construct(self, x):
        x = self.avg(self.pool(self.act(self.bn(self.conv(x)))))
        return self.head(self.drop(self.norm(self.fc(x.reshape(x.shape[0], -1)))))


#: bug -> the finding (check, subject, severity); ``None``: a faithful twin, silent.
PLANTED = {
    "gelu-tanh": ("GA636", "act", "error"),
    "relu": ("GA636", "act", "error"),
    "momentum-literal": ("GA635", "bn", "error"),
    "mint-momentum": ("GA635", "bn", "error"),
    "layernorm-eps": ("GA635", "norm", "warning"),
    "keep-prob-as-p": ("GA637", "drop", "error"),
    "conv-valid": ("GA638", "conv", "error"),
    "ceil-mode": ("GA638", "pool", "error"),
    "count-include-pad": ("GA638", "avg", "error"),
    "pool-kind": ("GA638", "pool", "error"),
    "": None,
    "conv-same": None,
    "mint": None,
    "keep-prob": None,  # MindSpore 1.x's keep_prob=0.9 is the rate 0.1: the original's
}


def audit(net: nn.Cell, reference: str | Path) -> graphaudit.Report:
    # GA709 and GA701 guess a momentum or a dropout rate in the other convention from the number
    # alone; GA635 and GA637 confirm them (one cause, one finding): run with them, as audit() does
    return graphaudit.audit(net, reference=str(reference), select=[*CHECKS, "GA701", "GA709"])


def findings(report: graphaudit.Report) -> list[tuple[str, str, str]]:
    """The attribute checks' findings, those folded into the finding they confirm too."""
    return sorted({(c, f.subject, f.severity) for c in CHECKS for f in report.by_check(c)})


@pytest.mark.parametrize("kind", ["dump", "onnx"])
@pytest.mark.parametrize("bug", sorted(PLANTED))
def test_a_planted_attribute_is_found_at_its_cell_and_each_twin_is_silent(bug, kind):
    expected = PLANTED[bug]
    if kind == "onnx" and bug == "keep-prob-as-p":
        expected = None  # an ONNX export in eval mode has no Dropout: nothing to compare
    report = audit(Port(bug), DUMP if kind == "dump" else ONNX)
    assert set(CHECKS) <= set(report.checks_run), report.skipped
    assert findings(report) == ([expected] if expected else []), str(report)
    if PLANTED[bug] is None:  # a faithful twin: nothing at all, GA701 and GA709 included
        assert not report.findings, str(report)


def test_the_same_wrong_epsilon_in_every_block_is_one_finding(tmp_path):
    modules = {"": {"class": "Stack"}}
    weights = {}
    for i in range(3):
        modules[str(i)] = {"class": "LayerNorm", "eps": 1e-12, "normalized_shape": [4]}
        weights[f"{i}.weight"], weights[f"{i}.bias"] = np.ones(4, np.float32), np.zeros(4, np.float32)
    write_safetensors(str(tmp_path / "weights.safetensors"), weights)
    np.savez(tmp_path / "activations.npz", **{"#0/output.0": np.ones(4, np.float32)})
    np.savez(tmp_path / "inputs.npz", **{"0": np.ones((1, 4), np.float32)})
    manifest = {"graphaudit_reference": 1, "calls": [], "ties": [], "modules": modules}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    net = nn.SequentialCell([nn.LayerNorm((4,)) for _ in range(3)])  # MindSpore's default epsilon, 1e-7
    report = audit(net, tmp_path)
    found = [(f.check_id, f.subject, f.subjects) for f in report.findings]
    assert found == [("GA635", "(root)", ("0", "1", "2"))], str(report)
    assert "3 cells alike" in report.findings[0].message


def test_a_weights_file_records_no_attributes_and_says_what_to_pass():
    report = audit(Port("gelu-tanh"), DUMP / "weights.safetensors")
    for check in CHECKS:
        assert "weights only, not its layers' attributes" in report.skipped[check], report.skipped
        assert "python -m graphaudit.reference" in report.skipped[check]


def test_a_dump_made_before_attributes_were_recorded_says_dump_again(tmp_path):
    old = tmp_path / "old"
    shutil.copytree(DUMP, old)
    manifest = json.loads((old / "manifest.json").read_text())
    del manifest["modules"]
    (old / "manifest.json").write_text(json.dumps(manifest))
    report = audit(Port("gelu-tanh"), old)
    assert "predates attributes" in report.skipped["GA636"], report.skipped


def test_the_audit_changes_nothing_it_reads():
    net = Port("gelu-tanh")
    before = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    stamp = {p.name: os.stat(DUMP / p.name).st_mtime_ns for p in DUMP.iterdir()}
    audit(net, DUMP)
    assert all(np.array_equal(p.asnumpy(), before[p.name]) for p in net.get_parameters())
    assert {p.name: os.stat(DUMP / p.name).st_mtime_ns for p in DUMP.iterdir()} == stamp


@pytest.mark.parametrize(
    ("port", "reference", "attribute"),
    [
        # 'same' at stride 2 pads (0, 1) on an even input where torch's padding=1 pads (1, 1)
        (
            nn.Conv2d(3, 8, 3, stride=2, pad_mode="same"),
            {
                "class": "Conv2d",
                "kernel_size": [3, 3],
                "stride": [2, 2],
                "padding": [1, 1],
                "dilation": [1, 1],
            },
            "pads",
        ),
        # squeezenet's first conv in mindcv: 'same' where torchvision pads nothing
        (
            nn.Conv2d(3, 8, 3, stride=2, pad_mode="same"),
            {
                "class": "Conv2d",
                "kernel_size": [3, 3],
                "stride": [2, 2],
                "padding": [0, 0],
                "dilation": [1, 1],
            },
            "pads",
        ),
        # MindSpore's pools default to stride 1, torch's to the kernel
        (nn.MaxPool2d(2), {"class": "MaxPool2d", "kernel_size": 2, "stride": 2, "padding": 0}, "stride"),
        (nn.LeakyReLU(0.2), {"class": "LeakyReLU", "negative_slope": 0.01}, "negative_slope"),
        (nn.Softmax(axis=1), {"class": "Softmax", "dim": -1}, "dim"),
    ],
)
def test_conventions_that_differ_are_compared_in_one(port, reference, attribute):
    mine, theirs = port_layer(port), torch_layer(reference)
    assert mine is not None and theirs is not None
    assert [d.attribute for d in compare_layers(mine, theirs)] == [attribute]


@pytest.mark.parametrize(
    ("port", "reference"),
    [
        (nn.Conv2d(3, 8, 5, pad_mode="same"), {"class": "Conv2d", "kernel_size": 5, "padding": 2}),
        (nn.Conv2d(3, 8, 3, pad_mode="valid"), {"class": "Conv2d", "kernel_size": 3, "padding": 0}),
        (nn.MaxPool2d(2, 2), {"class": "MaxPool2d", "kernel_size": 2, "stride": None, "padding": 0}),
        (
            nn.AvgPool2d(2, 2),
            {"class": "AvgPool2d", "kernel_size": 2, "stride": 2, "count_include_pad": False},
        ),
        (nn.BatchNorm1d(4), {"class": "BatchNorm1d", "eps": 1e-5, "momentum": 0.1}),
        (nn.Dropout(keep_prob=0.8), {"class": "Dropout", "p": 0.2}),
        (nn.GELU(approximate=False), {"class": "GELU", "approximate": "none"}),
    ],
)
def test_the_same_layer_written_in_either_framework_is_the_same(port, reference):
    mine, theirs = port_layer(port), torch_layer(reference)
    assert mine is not None and theirs is not None
    assert compare_layers(mine, theirs) == []


def test_layers_of_other_kernels_are_not_compared_attribute_by_attribute():
    # a conv of another kernel is another layer (GA632 says so): its padding is not a finding of its own
    assert (
        compare_layers(
            Layer("conv", {"kernel": (3, 3), "pads": "same", "stride": (1, 1)}),
            Layer("conv", {"kernel": (5, 5), "pads": ((0, 0), (0, 0)), "stride": (1, 1)}),
        )
        == []
    )


def test_a_weights_only_dump_gives_the_attribute_checks_and_says_why_not_the_outputs():
    folder = ROOT / "tests" / "references" / "planted" / "attributes_weights_only"
    assert sorted(p.name for p in folder.iterdir()) == ["manifest.json", "weights.safetensors"]
    report = graphaudit.audit(Port("gelu-tanh"), reference=str(folder), select=["GA63", "GA64"])
    assert [(f.check_id, f.subject) for f in report.findings] == [("GA636", "act")], str(report)
    assert "weights only, not what it computes" in report.skipped["GA640"]


def test_the_dump_command_asks_for_a_batch_unless_weights_only(tmp_path, capsys):
    from graphaudit.reference import main

    with pytest.raises(SystemExit):
        main(["models/original.py:build", "--out", str(tmp_path / "ref")])  # before torch is imported
    assert "--inputs is needed to record the outputs (or give --weights-only)" in capsys.readouterr().err
    assert not (tmp_path / "ref").exists()


def test_the_dump_records_each_modules_attributes():
    modules = json.loads((DUMP / "manifest.json").read_text())["modules"]
    assert modules["bn"] == {
        "class": "BatchNorm2d",
        "eps": 1e-5,
        "momentum": 0.1,
        "affine": True,
        "track_running_stats": True,
    }
    assert modules["act"]["approximate"] == "none" and modules["drop"]["p"] == 0.1
    assert modules["pool"]["ceil_mode"] is True and modules["avg"]["count_include_pad"] is False


def test_assert_matches_reference_fails_on_an_attribute_folded_into_the_guess_it_confirms():
    import graphaudit.testing as gt

    x = Tensor(np.load(DUMP / "inputs.npz")["0"])
    with pytest.raises(AssertionError, match=r"GA709 batchnorm-momentum-pytorch-convention"):
        gt.assert_matches_reference(Port("momentum-literal"), str(DUMP), inputs=x)
    with pytest.raises(AssertionError, match=r"GA636 activation-differs-from-reference"):
        gt.assert_matches_reference(Port("gelu-tanh"), str(DUMP), inputs=x)
    gt.assert_matches_reference(Port(), str(DUMP), inputs=x)
    # a weights file records no attributes: the attribute checks are not required to run
    gt.assert_matches_reference(Port(), str(DUMP / "weights.safetensors"))


def test_assert_matches_reference_leaves_a_guess_the_original_does_not_confirm_alone(tmp_path):
    import graphaudit.testing as gt

    modules = {"": {"class": "Net"}, "0": {"class": "Linear"}, "1": {"class": "Dropout", "p": 0.7}}
    write_safetensors(
        str(tmp_path / "weights.safetensors"),
        {"0.weight": np.eye(4, dtype=np.float32), "0.bias": np.zeros(4, np.float32)},
    )
    manifest = {"graphaudit_reference": 1, "calls": [], "ties": [], "modules": modules, "activations": False}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    net = nn.SequentialCell([nn.Dense(4, 4), nn.Dropout(p=0.7)])  # the original's own rate, above half
    report = gt.assert_matches_reference(net, str(tmp_path))
    assert [f.check_id for f in report.findings] == ["GA701"]  # said, not failed on: the original has it


@pytest.mark.parametrize("kind", ["dump", "onnx"])
@pytest.mark.parametrize("align_corners", [False, True])
def test_an_upsampling_on_another_grid_is_found_and_its_twin_is_silent(kind, align_corners):
    class Upsampler(nn.Cell):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
            self.up = nn.Upsample(size=(12, 12), mode="bilinear", align_corners=align_corners)

        def construct(self, x):
            return self.up(self.conv(x))

    dump = ROOT / "samples" / "GA639" / "original"
    reference = dump if kind == "dump" else ROOT / "tests" / "references" / "planted" / "upsample.onnx"
    report = graphaudit.audit(Upsampler(), reference=str(reference), select=["GA639"])
    assert "GA639" in report.checks_run, report.skipped
    found = [(f.check_id, f.subject) for f in report.findings]
    assert found == ([("GA639", "up")] if align_corners else []), str(report)


def test_selecting_the_attribute_checks_alone_shows_what_they_confirmed():
    # GA635's momentum folds into GA709's finding (one cause, one finding); select=["GA63"] names
    # GA635, so that finding is reported, not hidden as "not selected" under GA709's ID
    report = graphaudit.audit(Port("momentum-literal"), reference=str(DUMP), select=["GA63"])
    found = [(f.check_id, f.confirmed_by) for f in report.findings]
    assert found and all("GA635" in (check, *by) for check, by in found), found
    assert not report.ok
    assert graphaudit.audit(Port(), reference=str(DUMP), select=["GA63"]).ok

"""One cause, one finding for the attribute checks (GA635-GA639): a block built with one wrong
attribute, repeated *width* times, is one finding naming every cell, at any width.

The original is written as a dump folder by hand (its manifest's ``modules``, as
``python -m graphaudit.reference`` records them), so no torch is needed.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from mindspore import nn

import graphaudit
from graphaudit.reference import write_safetensors

#: check -> (the port's cell, the original's module record, the cell's attribute name in a block)
CASES = {
    "GA635": (lambda: nn.LayerNorm((4,)), {"class": "LayerNorm", "eps": 1e-12, "normalized_shape": [4]}),
    "GA636": (lambda: nn.GELU(), {"class": "GELU", "approximate": "none"}),
    "GA637": (lambda: nn.Dropout(p=0.9), {"class": "Dropout", "p": 0.1}),
    "GA638": (lambda: nn.MaxPool2d(2), {"class": "MaxPool2d", "kernel_size": 2, "stride": 2, "padding": 0}),
    "GA639": (
        lambda: nn.Upsample(size=(8, 8), mode="bilinear", align_corners=True),
        {"class": "Upsample", "mode": "bilinear", "align_corners": False},
    ),
}


class Block(nn.Cell):
    def __init__(self, layer: nn.Cell) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.layer = layer

    def construct(self, x):
        return self.layer(self.fc(x))


def original(folder: Path, width: int, record: dict) -> str:
    """A dump folder of *width* blocks ``blocks.<i>.fc`` (Linear) and ``blocks.<i>.layer`` (*record*)."""
    modules: dict[str, dict] = {"": {"class": "Net"}, "blocks": {"class": "ModuleList"}}
    weights = {}
    for i in range(width):
        modules[f"blocks.{i}.fc"] = {"class": "Linear"}
        modules[f"blocks.{i}.layer"] = dict(record)
        weights[f"blocks.{i}.fc.weight"] = np.eye(4, dtype=np.float32)
        weights[f"blocks.{i}.fc.bias"] = np.zeros(4, np.float32)
        if record["class"] == "LayerNorm":
            weights[f"blocks.{i}.layer.weight"] = np.ones(4, np.float32)
            weights[f"blocks.{i}.layer.bias"] = np.zeros(4, np.float32)
    write_safetensors(str(folder / "weights.safetensors"), weights)
    np.savez(folder / "activations.npz", **{"#0/output.0": np.ones(4, np.float32)})
    np.savez(folder / "inputs.npz", **{"0": np.ones((1, 4), np.float32)})
    manifest = {"graphaudit_reference": 1, "calls": [], "ties": [], "modules": modules}
    (folder / "manifest.json").write_text(json.dumps(manifest))
    return str(folder)


@pytest.mark.parametrize("width", [1, 3])
@pytest.mark.parametrize("check_id", sorted(CASES))
def test_one_wrong_attribute_in_every_block_is_one_finding(tmp_path, check_id, width):
    make, record = CASES[check_id]
    net = nn.SequentialCell()
    net.blocks = nn.CellList([Block(make()) for _ in range(width)])
    # GA635 and GA637 confirm GA709 and GA701 (which guess from the number alone): selecting them
    # alone still shows what they confirmed (runner.config), and by_check finds it under their ID
    report = graphaudit.audit(net, reference=original(tmp_path, width, record), select=[check_id])
    found = report.by_check(check_id)
    assert len(found) == 1, str(report)
    assert set(found[0].subjects) == {f"blocks.{i}.layer" for i in range(width)}
    assert found[0].subject == ("blocks.0.layer" if width == 1 else "blocks")

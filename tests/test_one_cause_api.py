"""One cause, one finding for API misuse and checkpoints: one line of a block, repeated N times.

A division in a block's ``construct``, a misspelt flag in its constructor, a checkpoint saved
from another cell or another width: each is one mistake however many blocks repeat it.
"""

from __future__ import annotations

import os

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit
from graphaudit.fingerprint import fingerprint

WIDTHS = (1, 4)


class MaskedMean(nn.Cell):
    """Masked mean pooling: divides by the mask's count, zero for an all-padding row."""

    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Dense(8, 8)

    def construct(self, x, mask):
        h = self.proj(x) * mask.expand_dims(-1)
        return h.sum(axis=1) / mask.sum(axis=1, keepdims=True)


class Pools(nn.Cell):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.pools = nn.CellList([MaskedMean() for _ in range(width)])

    def construct(self, x, mask):
        out = self.pools[0](x, mask)
        for pool in self.pools[1:]:
            out = out + pool(x, mask)
        return out


@pytest.mark.parametrize("width", WIDTHS)
def test_a_division_in_every_block_is_one_finding(width):
    x = Tensor(np.ones((2, 5, 8), np.float32))
    mask = Tensor(np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], np.float32))
    [finding] = graphaudit.audit(Pools(width), inputs=(x, mask)).by_check("GA703")
    assert finding.subjects == tuple(f"pools.{i}" for i in range(width))


class Frozen(nn.Cell):
    """A block whose constructor means to freeze it and misspells the flag."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.requires_grads = False  # meant: requires_grad on the parameters


@pytest.mark.parametrize("width", WIDTHS)
def test_a_flag_misspelt_in_every_block_is_one_finding(width):
    net = nn.SequentialCell([Frozen() for _ in range(width)])
    [finding] = graphaudit.audit(net).by_check("GA704")
    assert finding.subjects == tuple(str(i) for i in range(width))
    assert report_about_every_block(finding, width)


def report_about_every_block(finding: graphaudit.Finding, width: int) -> bool:
    return all(finding.concerns(str(i)) for i in range(width))


class Backbone(nn.Cell):
    def __init__(self, width: int, channels: int = 4) -> None:
        super().__init__()
        self.blocks = nn.SequentialCell([nn.Dense(channels, channels) for _ in range(width)])

    def construct(self, x):
        return self.blocks(x)


class Classifier(nn.Cell):
    def __init__(self, width: int, channels: int = 4) -> None:
        super().__init__()
        self.backbone = Backbone(width, channels)
        self.head = nn.Dense(channels, 2)

    def construct(self, x):
        return self.head(self.backbone(x))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_backbone_checkpoint_saved_on_its_own_is_one_finding(width, tmp_path):
    path = os.path.join(tmp_path, "backbone.ckpt")
    ms.save_checkpoint(Backbone(width), path)  # names blocks.*, the network's backbone.blocks.*
    report = graphaudit.audit(Classifier(width), checkpoint=path)
    [finding] = [f for f in report.by_check("GA604") if f.concerns("backbone.*")]
    assert finding.subject == "backbone" and len(finding.subjects) == 2 * width


@pytest.mark.parametrize("width", WIDTHS)
def test_a_checkpoint_of_another_width_is_one_finding(width, tmp_path):
    path = os.path.join(tmp_path, "wide.ckpt")
    ms.save_checkpoint(Classifier(width, channels=8), path)
    found = graphaudit.audit(Classifier(width), checkpoint=path).by_check("GA606")
    assert [f.subject for f in found] == ["backbone", "head.weight"]  # the head's bias has the same shape
    assert len(found[0].subjects) == 2 * width


class Dropped(nn.Cell):
    """*width* blocks of a Dense and a Dropout, and a head with a Dropout of its own."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.blocks = nn.CellList(
            [nn.SequentialCell([nn.Dense(4, 4), nn.Dropout(p=0.1)]) for _ in range(width)]
        )
        self.head = nn.SequentialCell([nn.Dropout(p=0.1), nn.Dense(4, 2)])

    def construct(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


@pytest.mark.parametrize("width", WIDTHS)
def test_blocks_switched_to_eval_in_a_loop_are_one_finding(width):
    net = Dropped(width)
    net.set_train(True)
    for block in net.blocks:
        block.set_train(False)  # meant: freeze them; it only switches their dropout off
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), mode="train")
    for check_id in ("GA501", "GA502"):
        [finding] = report.by_check(check_id)
        assert finding.concerns(f"blocks.{width - 1}*"), (check_id, finding.subjects)


@pytest.mark.parametrize("width", WIDTHS)
def test_weights_drawn_apart_on_each_rank_are_one_finding(width, tmp_path):
    fingerprint(Classifier(width), rank=1, world_size=2).save(tmp_path / "rank1.json")  # its own random draw
    report = graphaudit.audit(Classifier(width), peers=[tmp_path / "rank1.json"])
    [finding] = report.by_check("GA801")
    assert len(finding.subjects) == 2 * width + 2 and finding.subject == "(root)"

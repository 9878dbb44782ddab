"""GA101: one line repeating one cell object in every container it builds is one finding, naming that line.

The newcomer's script 03 (scripts/newcomer/) builds three stages with one ``stage()`` helper
that does ``[block] * depth``: one cause, which was three findings, one per stage. The line is
read from the source that builds each container; two repetitions on two lines stay two
findings however alike their containers are, and a network whose source cannot be read is
grouped as before (the containers of one loop's paths).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from mindspore import nn

import graphaudit

HERE = Path(__file__)


def line_of(marker: str) -> str:
    """``test_ga101_grouping.py:N``: the line of this file that ends with *marker*."""
    lines = HERE.read_text().splitlines()
    [number] = [i for i, text in enumerate(lines, 1) if text.endswith(f"# {marker}")]
    return f"{HERE.name}:{number}"


class ResBlock(nn.Cell):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3, pad_mode="same", has_bias=False)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.relu(self.bn(self.conv(x)) + x)


def stage(in_channels: int, out_channels: int, depth: int) -> nn.SequentialCell:
    down = nn.SequentialCell(
        [nn.Conv2d(in_channels, out_channels, 3, stride=2), nn.BatchNorm2d(out_channels)]
    )
    block = ResBlock(out_channels)
    return nn.SequentialCell([down] + [block] * depth)  # stage repeats


def good_stage(in_channels: int, out_channels: int, depth: int) -> nn.SequentialCell:
    down = nn.SequentialCell(
        [nn.Conv2d(in_channels, out_channels, 3, stride=2), nn.BatchNorm2d(out_channels)]
    )
    return nn.SequentialCell([down] + [ResBlock(out_channels) for _ in range(depth)])


class Stages(nn.Cell):
    """Three stages from one helper, as in scripts/newcomer/03."""

    def __init__(self, depths=(2, 2, 2)) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 4, 3)
        self.stage1 = stage(4, 8, depths[0])
        self.stage2 = stage(8, 16, depths[1])
        self.stage3 = stage(16, 16, depths[2])

    def construct(self, x):
        return self.stage3(self.stage2(self.stage1(self.stem(x))))


class GoodStages(Stages):
    def __init__(self) -> None:
        nn.Cell.__init__(self)
        self.stem = nn.Conv2d(3, 4, 3)
        self.stage1 = good_stage(4, 8, 2)
        self.stage2 = good_stage(8, 16, 2)
        self.stage3 = good_stage(16, 16, 2)


def ga101(net: nn.Cell) -> tuple[graphaudit.Report, list[graphaudit.Finding]]:
    report = graphaudit.audit(net)
    return report, report.by_check("GA101")


@pytest.mark.parametrize("depths", [(2, 2, 2), (2, 3, 4)])
def test_one_helper_repeating_a_block_in_three_stages_is_one_finding(depths):
    report, [finding] = ga101(Stages(depths=depths))
    slots = [f"stage{s}.{i}" for s in (1, 2, 3) for i in range(1, depths[s - 1] + 1)]
    assert finding.subjects == tuple(slots) and finding.severity == "error"
    assert all(report.about(path) == [finding] for path in slots)
    assert "stage1, stage2 and stage3 each hold one ResBlock object" in finding.message
    assert f"`[block] * depth` in stage() ({line_of('stage repeats')})" in finding.message
    assert finding.fix.startswith(
        f"Create a separate ResBlock for each slot in stage() ({line_of('stage repeats')})"
    )
    assert ("in 2 slots" if depths == (2, 2, 2) else "in 2-4 slots") in finding.message


def test_the_same_stages_built_right_are_not_reported():
    _, found = ga101(GoodStages())
    assert found == []


def encoder_layers() -> nn.SequentialCell:
    block = nn.Dense(8, 8)
    return nn.SequentialCell([block] * 2)  # encoder repeats


def decoder_layers() -> nn.SequentialCell:
    block = nn.Dense(8, 8)
    return nn.SequentialCell([block] * 2)  # decoder repeats


class Towers(nn.Cell):
    """Two unrelated helpers, each with its own ``[block] * 2``: containers alike, at the paths of one list."""

    def __init__(self) -> None:
        super().__init__()
        self.towers = nn.CellList([encoder_layers(), decoder_layers()])

    def construct(self, x):
        return self.towers[1](self.towers[0](x))


class EncoderDecoder(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = encoder_layers()
        self.decoder = decoder_layers()

    def construct(self, x):
        return self.decoder(self.encoder(x))


@pytest.mark.parametrize("net", [Towers, EncoderDecoder])
def test_two_unrelated_helpers_stay_two_findings(net):
    _, found = ga101(net())
    assert len(found) == 2
    holder = "towers." if net is Towers else ""
    names = ("0", "1") if net is Towers else ("encoder", "decoder")
    [first] = [f for f in found if f.subject.startswith(f"{holder}{names[0]}.")]
    [second] = [f for f in found if f.subject.startswith(f"{holder}{names[1]}.")]
    assert first.subjects == (f"{holder}{names[0]}.0", f"{holder}{names[0]}.1")
    assert second.subjects == (f"{holder}{names[1]}.0", f"{holder}{names[1]}.1")
    assert f"encoder_layers() ({line_of('encoder repeats')})" in first.message
    assert f"decoder_layers() ({line_of('decoder repeats')})" in second.message


class Stage(nn.Cell):
    """A stage class whose constructor repeats one block."""

    def __init__(self) -> None:
        super().__init__()
        block = nn.Dense(8, 8)
        self.body = nn.SequentialCell([block] * 2)  # Stage repeats

    def construct(self, x):
        return self.body(x)


class NamedStages(nn.Cell):
    """Stages held under names, not indices: no loop's pattern gathers ``low.body`` and ``high.body``."""

    def __init__(self) -> None:
        super().__init__()
        self.low = Stage()
        self.high = Stage()

    def construct(self, x):
        return self.high(self.low(x))


def test_one_constructor_line_in_named_stages_is_one_finding():
    _, [finding] = ga101(NamedStages())
    assert finding.subjects == ("low.body.0", "low.body.1", "high.body.0", "high.body.1")
    assert f"`[block] * 2` in Stage.__init__() ({line_of('Stage repeats')})" in finding.message


class ResNetLike(nn.Cell):
    """``_make_layer`` as in ResNet: a stride list ``[1] * n`` (not cells), and ``layers.extend``."""

    def __init__(self) -> None:
        super().__init__()
        self.layer1 = self._make_layer(8, 3, 1)
        self.layer2 = self._make_layer(8, 3, 2)

    def _make_layer(self, channels: int, blocks: int, stride: int) -> nn.SequentialCell:
        strides = [stride] + [1] * (blocks - 1)
        layers = [nn.Conv2d(channels, channels, 3, stride=strides[0])]
        block = ResBlock(channels)
        layers.extend([block] * (blocks - 1))  # _make_layer repeats
        return nn.SequentialCell(layers)

    def construct(self, x):
        return self.layer2(self.layer1(x))


def test_a_method_helper_is_followed_and_a_list_of_constants_is_no_repetition():
    _, [finding] = ga101(ResNetLike())
    assert finding.subjects == ("layer1.1", "layer1.2", "layer2.1", "layer2.2")
    assert (
        f"`[block] * (blocks - 1)` in ResNetLike._make_layer() ({line_of('_make_layer repeats')})"
        in finding.message
    )


SOURCELESS = """
from mindspore import nn

def stage():
    block = nn.Dense(8, 8)
    return nn.SequentialCell([block] * 2)

class Net(nn.Cell):
    def __init__(self):
        super().__init__()
        self.stage1 = stage()
        self.stage2 = stage()

    def construct(self, x):
        return self.stage2(self.stage1(x))
"""


def test_a_network_without_readable_source_is_grouped_by_its_paths_as_before():
    scope: dict = {}
    exec(compile(SOURCELESS, "<generated>", "exec"), scope)
    _, found = ga101(scope["Net"]())
    assert [f.subjects for f in found] == [("stage1.0", "stage1.1"), ("stage2.0", "stage2.1")]
    assert all("` in " not in f.message for f in found)  # no line claimed


def test_only_the_users_functions_are_read():
    import textwrap

    import numpy as np

    from graphaudit.checks._shared.repetition_sites import user_function

    assert user_function(stage) is stage and user_function(ResNetLike._make_layer) is ResNetLike._make_layer
    assert user_function(np.linspace) is None and user_function(textwrap.dedent) is None  # installed, stdlib
    assert user_function(nn.SequentialCell.__init__) is None and user_function(ResBlock) is None

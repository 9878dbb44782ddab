"""One cause, one finding for wiring, design and sharing checks: a block built wrong, repeated N times.

Each network here repeats one mistake in every block of a stack (one constructor or one
``construct`` written wrong) and the check must report it once, naming every block, at any
depth. tests/test_one_cause_one_finding.py does the same for the optimizer and probe checks.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import graphaudit

WIDTHS = (1, 4)


def ones(*shape: int) -> Tensor:
    return Tensor(np.ones(shape, np.float32))


class Pair(nn.Cell):
    """A student and a teacher branch; the teacher is fed the student's output by mistake."""

    def __init__(self) -> None:
        super().__init__()
        self.student = nn.Dense(8, 8)
        self.teacher = nn.Dense(8, 8)
        self.aux = nn.Dense(8, 8)  # meant to refine the student: construct forgets it

    def construct(self, x):
        s = self.student(x)
        return s - self.teacher(x + s)


class Pairs(nn.Cell):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.blocks = nn.CellList([Pair() for _ in range(width)])

    def construct(self, x):
        out = x
        for block in self.blocks:
            out = out + block(x)
        return out


def audit_pairs(width: int, **spec) -> graphaudit.Report:
    net = Pairs(width)
    return graphaudit.audit(
        net, nn.SGD(net.trainable_params()), inputs=ones(2, 8), spec=graphaudit.Spec(**spec)
    )


@pytest.mark.parametrize("width", WIDTHS)
def test_a_layer_every_block_forgets_to_call_is_one_finding(width):
    [finding] = audit_pairs(width).by_check("GA301")
    assert finding.subjects == tuple(f"blocks.{i}.aux" for i in range(width))
    assert finding.subject == ("blocks.0.aux" if width == 1 else "blocks")
    assert ("holds parameters but was never called" if width == 1 else "4 Dense cells") in finding.message


@pytest.mark.parametrize("width", WIDTHS)
def test_a_forbidden_flow_in_every_block_is_one_finding(width):
    report = audit_pairs(width, forbidden_connections=[("blocks.*.student", "blocks.*.teacher")])
    [finding] = report.by_check("GA305")
    assert finding.subjects == tuple(f"blocks.{i}.student" for i in range(width))
    assert report.about(f"blocks.{width - 1}.student") == [finding]


@pytest.mark.parametrize("width", WIDTHS)
def test_an_undeclared_flow_in_every_block_is_one_finding(width):
    spec = {
        "expected_connections": [("blocks.*.teacher", "blocks.*.student")],
        "exhaustive_connections": True,
    }
    [finding] = audit_pairs(width, **spec).by_check("GA306")  # the design lists them: the flow is undeclared
    assert finding.subjects == tuple(f"blocks.{i}.student" for i in range(width))
    assert ("('blocks.0.student', 'blocks.0.teacher')" if width == 1 else "'blocks.*.student'") in finding.fix


@pytest.mark.parametrize("width", WIDTHS)
def test_every_block_called_a_wrong_number_of_times_is_one_finding(width):
    [finding] = audit_pairs(width, calls={"blocks.*.teacher": 2}).by_check("GA307")
    assert finding.subjects == tuple(f"blocks.{i}.teacher" for i in range(width))
    assert (finding.cause.actual, finding.cause.expected) == (1, 2)
    assert "called 1 time in" in finding.message


class Narrowed(nn.Cell):
    """A stem, then *width* blocks whose first convolution was typed with 1 output channel."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 16, 3)
        self.blocks = nn.SequentialCell(
            [
                nn.SequentialCell([nn.Conv2d(16, 1, 3), nn.ReLU(), nn.Conv2d(1, 16, 3), nn.ReLU()])
                for _ in range(width)
            ]
        )
        self.head = nn.Dense(16, 4)

    def construct(self, x):
        return self.head(self.blocks(self.stem(x)).mean((2, 3)))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_channel_typo_in_every_block_is_one_finding(width):
    [finding] = graphaudit.audit(Narrowed(width), inputs=ones(2, 3, 8, 8)).by_check("GA314")
    assert finding.subjects == tuple(f"blocks.{i}.0" for i in range(width))


class Pooled(nn.Cell):
    """*width* stages, each pooling with kernel_size and stride swapped: MaxPool2d(2, 3)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.stages = nn.SequentialCell(
            [
                nn.SequentialCell(
                    [nn.Conv2d(3 if i == 0 else 8, 8, 3), nn.ReLU(), nn.MaxPool2d(kernel_size=2, stride=3)]
                )
                for i in range(width)
            ]
        )
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        return self.head(self.stages(x).mean((2, 3)))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_pooling_written_wrong_in_every_stage_is_one_finding(width):
    [finding] = graphaudit.audit(Pooled(width), inputs=ones(1, 3, 243, 243)).by_check("GA316")
    assert finding.subjects == tuple(f"stages.{i}.2" for i in range(width))
    assert finding.severity == "warning"


class Tied(nn.Cell):
    """An embedding and a decoder whose weight (and bias) are tied in the constructor."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Dense(6, 6)
        self.decoder = nn.Dense(6, 6)
        self.decoder.weight = self.embed.weight
        self.decoder.bias = self.embed.bias

    def construct(self, x):
        return self.decoder(self.embed(x))


class TiedStack(nn.Cell):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.blocks = nn.SequentialCell([Tied() for _ in range(width)])

    def construct(self, x):
        return self.blocks(x)


@pytest.mark.parametrize("width", WIDTHS)
def test_ties_made_in_every_block_are_one_finding(width):
    spec = graphaudit.Spec(frozen=["nothing.*"])  # a design that says nothing of the ties
    net = TiedStack(width)
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), spec=spec)
    for check_id in ("GA102", "GA104"):
        [finding] = report.by_check(check_id)
        assert len(finding.subjects) == 2 * width, (
            check_id,
            finding.subjects,
        )  # the weight and the bias, each block


class SharedInside(nn.Cell):
    """A block whose second layer is its first one (self.b = self.a), left over from an experiment."""

    def __init__(self) -> None:
        super().__init__()
        self.a = nn.Dense(6, 6)
        self.b = self.a

    def construct(self, x):
        return self.b(self.a(x))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_cell_shared_in_every_block_is_one_finding(width):
    net = nn.SequentialCell([SharedInside() for _ in range(width)])
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), spec=graphaudit.Spec(frozen=["nothing.*"]))
    [finding] = report.by_check("GA104")
    assert report.about(f"{width - 1}.a") == [finding]


class Heads(nn.Cell):
    """*width* + 1 heads in a list; construct calls only the first (an index where a loop was meant)."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.heads = nn.CellList([nn.Dense(8, 2) for _ in range(width + 1)])

    def construct(self, x):
        return self.heads[0](x)


@pytest.mark.parametrize("width", WIDTHS)
def test_the_items_of_a_list_never_called_are_one_finding(width):
    [finding] = graphaudit.audit(Heads(width), inputs=ones(2, 8)).by_check("GA301")
    assert finding.subjects == tuple(f"heads.{i}" for i in range(1, width + 1))


class Unactivated(nn.Cell):
    """A block whose construct forgets the activation between its two layers (self.relu never called)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(8, 8)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(8, 8)

    def construct(self, x):
        return ops.relu(self.fc2(self.fc1(x)))


@pytest.mark.parametrize("width", WIDTHS)
def test_an_activation_every_block_forgets_is_one_finding(width):
    net = nn.SequentialCell([Unactivated() for _ in range(width)])
    [finding] = graphaudit.audit(net, inputs=ones(2, 8)).by_check("GA308")
    assert finding.subjects == tuple(p for i in range(width) for p in (f"{i}.fc1", f"{i}.fc2"))
    assert finding.severity == "warning"


class Stage(nn.Cell):
    """A stage whose constructor repeats one block: nn.SequentialCell([block] * 2)."""

    def __init__(self) -> None:
        super().__init__()
        block = nn.Dense(8, 8)
        self.body = nn.SequentialCell([block] * 2)

    def construct(self, x):
        return self.body(x)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_block_repeated_in_every_stage_is_one_finding(width):
    net = nn.SequentialCell([Stage() for _ in range(width)])
    [finding] = graphaudit.audit(net).by_check("GA101")
    assert report_mentions(finding, [f"{i}.body.{slot}" for i in range(width) for slot in (0, 1)])


def report_mentions(finding: graphaudit.Finding, paths: list[str]) -> bool:
    return all(finding.concerns(path) for path in paths)


class Named(nn.Cell):
    """Two Dense layers under auto_prefix=False: both name their parameters weight and bias."""

    def __init__(self, width: int) -> None:
        super().__init__(auto_prefix=False)
        self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(width + 1)], auto_prefix=False)

    def construct(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


@pytest.mark.parametrize("width", WIDTHS)
def test_names_clashing_under_one_auto_prefix_are_one_finding(width):
    [finding] = graphaudit.audit(Named(width)).by_check("GA105")
    assert set(finding.subjects) == {"weight", "bias"} and len(finding.nodes) == 2 * (width + 1)

"""One cause, one finding, however many parameters it touches (the finding count does not grow)."""

from __future__ import annotations

import mindspore as ms
import numpy as np
import pytest
from mindspore import Tensor, nn, ops
from stacks import Stack, batch

import graphaudit

WIDTHS = (1, 6, 40)


def count(report: graphaudit.Report, check_id: str) -> int:
    return len(report.by_check(check_id))


@pytest.mark.parametrize("width", WIDTHS)
def test_a_misspelt_freeze_over_a_whole_backbone_is_one_finding(width):
    net = Stack(width)
    for p in net.layers.get_parameters():
        p.require_grad = False  # the typo, over every layer
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()))
    [finding] = report.by_check("GA204")
    assert finding.subject.startswith("layers") and len(finding.subjects) == 2 * width
    assert report.about("layers.0.weight") == [finding]


@pytest.mark.parametrize("width", WIDTHS)
def test_an_optimizer_of_another_instance_is_one_finding(width):
    optimizer = nn.SGD(Stack(width).trainable_params())
    report = graphaudit.audit(Stack(width), optimizer)
    assert count(report, "GA202") == 1 and len(report.by_check("GA202")[0].subjects) == 2 * width + 2


@pytest.mark.parametrize("width", WIDTHS)
def test_layers_left_out_of_the_optimizer_are_one_finding(width):
    net = Stack(width)
    report = graphaudit.audit(net, nn.SGD(net.head.trainable_params()))
    [finding] = report.by_check("GA201")
    assert finding.subject.startswith("layers") and len(finding.subjects) == 2 * width


@pytest.mark.parametrize("width", WIDTHS)
def test_grad_weights_missing_many_parameters_are_one_finding(width):
    net = Stack(width)
    optimizer = nn.SGD(net.trainable_params())
    report = graphaudit.audit(net, optimizer, grad_weights=net.head.trainable_params())
    [finding] = report.by_check("GA207")
    assert len(finding.subjects) == 2 * width


@pytest.mark.parametrize("width", WIDTHS)
def test_dead_branches_seen_by_the_probe_are_one_finding_each_check(width):
    ms.set_seed(0)  # an unseeded init closed every ReLU of the live layer for 1 global seed in 16 (seed 14)
    net = Stack(1, dead=width)
    x, y = batch()
    report = graphaudit.audit(
        net, nn.SGD(net.trainable_params(), 0.1), inputs=x, label=y, loss_fn=nn.MSELoss(), probe=True
    )
    for check_id in ("GA901", "GA904"):
        [finding] = report.by_check(check_id)
        assert finding.subject.startswith("unused") and len(finding.subjects) == 2 * width, check_id


def test_a_head_replaced_after_the_optimizer_is_told_without_contradiction():
    net = Stack(2)
    optimizer = nn.SGD(net.trainable_params(), 0.1)
    net.head = nn.Dense(4, 2)  # the replaced head: the optimizer still holds the old one
    x, y = batch()
    report = graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.MSELoss(), probe=True)
    errors = [f.check_id for f in report.of_severity("error")]
    assert errors == ["GA202"]  # the old head updated; the new one left out (GA201, GA905) is the same cause
    ga202 = report.by_check("GA202")[0]
    assert ga202.confirmed_by == ("GA201", "GA905") and report.by_check("GA201") == [ga202]
    assert "replaced after the optimizer was built" in ga202.message  # what was seen, both causes
    assert "another instance" in ga202.message
    assert not report.of_severity("warning")  # no zero-gradient warning about weights the network lost


class Dropped(nn.Cell):
    """*depth* blocks, each a Dense and a Dropout ported from PyTorch: nn.Dropout(0.1) keeps 10%."""

    def __init__(self, depth: int) -> None:
        super().__init__()
        self.blocks = nn.CellList(
            [nn.SequentialCell([nn.Dense(4, 4), nn.Dropout(0.1)]) for _ in range(depth)]
        )

    def construct(self, x):
        for block in self.blocks:
            x = block(x)
        return x


@pytest.mark.parametrize("width", WIDTHS)
def test_dropouts_built_with_one_wrong_rate_are_one_finding(width):
    report = graphaudit.audit(Dropped(width))
    [finding] = report.by_check("GA701")
    assert len(finding.subjects) == width and finding in report.about(f"blocks.{width - 1}.1")
    assert finding.subject == ("blocks.0.1" if width == 1 else "blocks")


@pytest.mark.parametrize("width", WIDTHS)
def test_a_declared_freeze_never_done_is_one_finding(width):
    net = Stack(width)
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), spec=graphaudit.Spec(frozen=["layers.*"]))
    [finding] = report.by_check("GA205")
    assert finding.subject == ("layers.0" if width == 1 else "layers") and len(finding.subjects) == 2 * width


@pytest.mark.parametrize("width", WIDTHS)
def test_a_freeze_that_went_too_far_is_one_finding(width):
    net = Stack(width)
    for p in net.get_parameters():
        p.requires_grad = False  # meant: the layers only
    report = graphaudit.audit(net, spec=graphaudit.Spec(trainable=["layers.*", "head.*"]))
    [finding] = report.by_check("GA206")
    assert finding.subject == "(root)" and len(finding.subjects) == 2 * width + 2


class Branches(nn.Cell):
    """A head, and *width* auxiliary layers computed from the input and dropped."""

    def __init__(self, width: int) -> None:
        super().__init__()
        self.head = nn.Dense(4, 2)
        self.aux = nn.CellList([nn.Dense(4, 4) for _ in range(width)])

    def construct(self, x):
        for layer in self.aux:
            layer(x)  # computed, never used
        return self.head(x)


@pytest.mark.parametrize("width", WIDTHS)
def test_a_dropped_branch_is_one_finding(width):
    net = Branches(width)
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), inputs=batch()[0])
    [finding] = report.by_check("GA302")
    assert finding.subject == "aux" and len(finding.subjects) == 2 * width  # the list holds only them


class Logged(Stack):
    """The stack, then a log of negative values: NaN gradients in every layer behind it."""

    def __init__(self, depth: int) -> None:
        super().__init__(depth)
        # Positive weights keep every ReLU open for the positive batch, so the NaN reaches every
        # layer; a random init can close all of one layer's ReLUs (their gradient is then 0, not
        # NaN), and which init a test gets depended on the tests run before it.
        for param in self.get_parameters():
            param.set_data(Tensor(np.full(param.shape, 0.1, dtype=np.float32)))

    def construct(self, x):
        return ops.log(super().construct(x) - 100.0)


@pytest.mark.parametrize("width", WIDTHS[:2])  # a probe step each: the small widths say it
def test_nan_gradients_from_one_operation_are_one_finding(width):
    net = Logged(width)
    x, y = batch()
    report = graphaudit.audit(
        net, nn.SGD(net.trainable_params(), 0.1), inputs=x, label=y, loss_fn=nn.MSELoss(), probe=True
    )
    [finding] = report.by_check("GA903")
    assert len(finding.subjects) >= 4 and "head.weight" in finding.subjects  # the head, and layers behind it

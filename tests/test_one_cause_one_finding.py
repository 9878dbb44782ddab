"""One cause, one finding, however many parameters it touches (the finding count does not grow)."""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn, ops

import graphaudit

WIDTHS = (1, 6, 40)


class Stack(nn.Cell):
    """*depth* Dense layers, and *dead* more that construct() never calls."""

    def __init__(self, depth: int, dead: int = 0) -> None:
        super().__init__()
        self.layers = nn.CellList([nn.Dense(4, 4) for _ in range(depth)])
        self.unused = nn.CellList([nn.Dense(4, 4) for _ in range(dead)])
        self.head = nn.Dense(4, 2)

    def construct(self, x):
        for layer in self.layers:
            x = ops.relu(layer(x))
        return self.head(x)


def batch() -> tuple[Tensor, Tensor]:
    rng = np.random.default_rng(0)
    return Tensor(rng.random((4, 4), dtype=np.float32)), Tensor(rng.random((4, 2), dtype=np.float32))


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
    assert sorted(errors) == ["GA201", "GA202"]  # the new head left out, the old one updated
    assert report.by_check("GA201")[0].confirmed_by == ("GA905",)
    ga202 = report.by_check("GA202")[0]
    assert "replaced after the optimizer was built" in ga202.message  # what was seen, both causes
    assert "another instance" in ga202.message
    assert not report.of_severity("warning")  # no zero-gradient warning about weights the network lost

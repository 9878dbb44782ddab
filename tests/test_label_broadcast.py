"""A label that broadcasts against the output is an error for every element-wise loss (issue 19, pattern 3).

Before: an ``(8, 1)`` label against an ``(8, 3)`` output with ``nn.MSELoss`` trained every
output column on the same target and got no finding (GA054 caught only shapes that
broadcast to something larger than the output). Losses that broadcast silently on
MindSpore 2.10 (MSE, L1, Huber) now get GA054; those that raise on it (SmoothL1, BCE,
BCEWithLogits, KLDiv) get GA060. Either way the audit is not OK; with the label of the
output's shape, neither is reported.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit

RNG = np.random.default_rng(0)
X = Tensor(RNG.random((8, 4), dtype=np.float32))

LOSSES = {
    "MSELoss": (nn.MSELoss, None),
    "L1Loss": (nn.L1Loss, None),
    "SmoothL1Loss": (lambda: nn.SmoothL1Loss(reduction="mean"), None),
    "HuberLoss": (nn.HuberLoss, None),
    "BCELoss": (lambda: nn.BCELoss(reduction="mean"), nn.Sigmoid),
    "BCEWithLogitsLoss": (nn.BCEWithLogitsLoss, None),
    "KLDivLoss": (lambda: nn.KLDivLoss(reduction="mean"), nn.LogSoftmax),
}


def setup(name: str, label_shape: tuple[int, ...]) -> graphaudit.Report:
    make_loss, activation = LOSSES[name]
    layers = [nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3)] + ([activation()] if activation else [])
    net = nn.SequentialCell(layers)
    label = Tensor(RNG.random(label_shape, dtype=np.float32))
    return graphaudit.audit(
        net, nn.SGD(net.trainable_params()), inputs=(X,), label=label, loss_fn=make_loss()
    )


def loss_broadcasts(name: str) -> bool:
    make_loss, _ = LOSSES[name]
    try:
        out = make_loss()(Tensor(np.full((8, 3), 0.5, np.float32)), Tensor(np.full((8, 1), 0.5, np.float32)))
        out.asnumpy()  # CPU kernels check their inputs late: the error surfaces here
    except Exception:
        return False
    return True


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_a_label_broadcast_over_the_output_columns_is_an_error(name):
    report = setup(name, (8, 1))
    errors = {f.check_id for f in report.of_severity("error")}
    expected = "GA054" if loss_broadcasts(name) else "GA060"
    assert expected in errors, str(report)
    if expected == "GA054":
        (finding,) = report.by_check("GA054")
        assert finding.subject == "label" and "broadcast along axis 1" in finding.message


@pytest.mark.parametrize("name", sorted(LOSSES))
def test_the_label_of_the_output_shape_is_not_reported(name):
    report = setup(name, (8, 3))
    assert not report.by_check("GA054") and not report.by_check("GA060"), str(report)

"""Unmodified mindcv models with a correct optimizer and loss: no error, no warning."""

from __future__ import annotations

import numpy as np
import pytest
from mindcv_models import unmodified
from mindspore import Tensor, nn

import graphaudit
from graphaudit.testing import assert_clean

mindcv = pytest.importorskip("mindcv")

MODELS = [
    ("resnet18", 64),
    ("mobilenet_v3_small_100", 64),
    ("densenet121", 64),
    ("efficientnet_b0", 64),
    ("vit_b_32_224", 224),
]


@pytest.mark.slow
@pytest.mark.parametrize(("name", "size"), MODELS, ids=[m[0] for m in MODELS])
def test_unmodified_model_audits_clean(name, size):
    net = unmodified(name)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9, weight_decay=1e-4)
    x = Tensor(np.random.default_rng(0).random((2, 3, size, size), dtype=np.float32))
    y = Tensor(np.array([3, 997], np.int32))
    report = graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.CrossEntropyLoss())
    # everything the network, a batch, its label, the loss and the optimizer allow did run
    given = {
        "a traced forward pass",
        "the label of the traced batch",
        "the loss, traced on the network's output",
        "the optimizer",
        "the optimizer's learning-rate schedule",
        "the initial values of the weights",
    }
    assert report.checks_run and all(n.reason is None for n in report.not_run), report.not_run
    assert not {n.needs for n in report.not_run} & given
    assert_clean(report)
    assert not report.of_severity("warning")


@pytest.mark.slow
def test_frozen_backbone_declared_in_the_design_is_not_an_error():
    net = unmodified("resnet18")
    optimizer = nn.Momentum(net.classifier.trainable_params(), learning_rate=0.01, momentum=0.9)
    frozen = graphaudit.Spec(
        frozen=[p.name for p in net.trainable_params() if not p.name.startswith("classifier.")]
    )
    report = graphaudit.audit(net, optimizer, spec=frozen)
    assert report.ok, str(report)
    assert not report.of_severity("warning"), str(report)
    undeclared = graphaudit.audit(net, optimizer)
    assert not undeclared.ok
    assert {f.check_id for f in undeclared.of_severity("error")} == {"GA201"}

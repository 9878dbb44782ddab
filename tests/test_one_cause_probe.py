"""One cause, one finding for the probe's per-parameter checks: one optimizer mistake over N layers.

tests/test_one_cause_one_finding.py holds GA901, GA903 and GA904 to it; these are the checks
that judge how one real step moved (or did not move) each parameter.
"""

from __future__ import annotations

import pytest
from mindspore import nn
from stacks import Stack, batch

import graphaudit
from graphaudit.checks import all_checks
from graphaudit.evidence import EvidenceSet
from graphaudit.runner import run_checks
from graphaudit.runner.request import build_request

WIDTHS = (1, 4)


def probed(net: nn.Cell, optimizer: nn.Optimizer, **kwargs) -> graphaudit.Report:
    x, y = batch()
    return graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=nn.MSELoss(), probe=True, **kwargs)


@pytest.mark.parametrize("width", WIDTHS)
def test_frozen_layers_decayed_by_the_optimizer_are_one_finding(width):
    net = Stack(width)
    for p in net.layers.get_parameters():
        p.requires_grad = False  # frozen, but the optimizer is built from every parameter
    report = probed(net, nn.SGD(net.get_parameters(), 0.1, weight_decay=0.1))
    [finding] = [f for f in report.findings if f.reported_by("GA902")]
    assert len(finding.subjects) == 2 * width and "layers.0.weight" in finding.subjects


@pytest.mark.parametrize("width", WIDTHS)
def test_layers_left_out_of_the_optimizer_are_one_finding_of_the_probe_too(width):
    net = Stack(width)
    x, y = batch()
    keywords = {"inputs": x, "label": y, "loss_fn": nn.MSELoss(), "probe": True}
    request = build_request(net, nn.SGD(net.head.trainable_params(), 0.1), **keywords)
    report = run_checks(EvidenceSet(request), [all_checks()["GA905"]])  # on its own: GA201 would fold it in
    [finding] = report.by_check("GA905")
    assert len(finding.subjects) == 2 * width and finding.subject == ("layers.0" if width == 1 else "layers")

"""One cause, one finding for the loss pairings: N heads built by one factory, each paired wrong.

A detection-style loss takes a tuple of head outputs; a head factory that ends every head in
the wrong activation (or in none) is one mistake, however many heads it builds. Each GA4xx
check that judges one output against the loss must report it once, naming every head.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit

WIDTHS = (1, 4)


class Heads(nn.Cell):
    """*width* heads made by one factory: ``Dense(8, units)`` then *end* (a cell, or nothing)."""

    def __init__(self, width: int, units: int, end: type[nn.Cell] | None) -> None:
        super().__init__()
        self.heads = nn.CellList(
            [
                nn.SequentialCell([nn.Dense(8, units), *([end()] if end is not None else [])])
                for _ in range(width)
            ]
        )

    def construct(self, x):
        outputs = tuple(head(x) for head in self.heads)
        return outputs[0] if len(outputs) == 1 else outputs


class EveryHead(nn.Cell):
    """The sum of one loss over every head output (the loss of a multi-scale detector)."""

    def __init__(self, loss: nn.Cell) -> None:
        super().__init__()
        self.loss = loss

    def construct(self, outputs, label):
        if not isinstance(outputs, tuple):
            outputs = (outputs,)
        total = self.loss(outputs[0], label)
        for output in outputs[1:]:
            total = total + self.loss(output, label)
        return total


INDICES = Tensor(np.array([0, 2], np.int32))
TARGETS = Tensor(np.array([[0.0, 1.0, 0.0], [1.0, 0.0, 1.0]], np.float32))
# GA402 (unbounded heads into BCELoss) is not here: BCELoss refuses values outside [0, 1], so
# a loss over several unbounded heads is traced on the first head only (register(once=)).
CASES = {  # check: (the heads' last cell, the loss, the label)
    "GA401": (nn.Sigmoid, nn.BCEWithLogitsLoss, TARGETS),
    "GA403": (lambda: nn.Softmax(axis=-1), nn.CrossEntropyLoss, INDICES),
    "GA404": (None, nn.NLLLoss, INDICES),
    "GA406": (lambda: nn.Softmax(axis=-1), nn.BCEWithLogitsLoss, TARGETS),
    "GA407": (nn.Tanh, nn.CrossEntropyLoss, INDICES),
}


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize("check_id", sorted(CASES))
def test_heads_paired_wrong_by_one_factory_are_one_finding(check_id, width):
    end, loss, label = CASES[check_id]
    net = Heads(width, 3, end)
    x = Tensor(np.ones((2, 8), np.float32))
    report = graphaudit.audit(net, inputs=x, label=label, loss_fn=EveryHead(loss()))
    assert check_id in report.checks_run, report.skipped.get(check_id)
    [finding] = report.by_check(check_id)
    heads = [n for n in finding.nodes if n.startswith(("cell:heads.", "call:heads.", "op:"))]
    assert len(heads) >= width, finding.nodes  # every head's activation (or last layer) is pointed at
    assert (f"{width} outputs" in finding.message) == (width > 1), finding.message

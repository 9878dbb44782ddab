"""One cause, one finding for the port-against-original checks: a block class ported wrong, repeated.

A port's block is written once and built ``width`` times: a bias left out of its Dense, a
layer added to it, a weight declared transposed are one mistake however deep the stack. A
stack cut short (the original's last blocks missing) is one mistake too. The original here is
a dict of arrays, made from the names and shapes PyTorch gives such a stack.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Parameter, Tensor, nn, ops

import graphaudit

WIDTHS = (2, 5)
HIDDEN = 6


class MatmulLayer(nn.Cell):
    """A Linear kept as PyTorch's GPT-2 keeps its Conv1D: ``x @ weight``, the weight ``(in, out)``."""

    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = Parameter(Tensor(np.ones((n_in, n_out), np.float32) / n_in), name="weight")
        self.bias = Parameter(Tensor(np.zeros(n_out, np.float32)), name="bias")

    def construct(self, x):
        return ops.matmul(x, self.weight) + self.bias


class Block(nn.Cell):
    """As the original: ``fc`` (6 to 12), LayerNorm, ``back`` (12 to 6); *bug* changes how the port declares it."""

    def __init__(self, bug: str) -> None:
        super().__init__()
        if bug == "transposed":
            self.fc = MatmulLayer(HIDDEN, 2 * HIDDEN)
        else:
            self.fc = nn.Dense(HIDDEN, 2 * HIDDEN, has_bias=bug != "no-bias")
        self.norm = nn.LayerNorm((2 * HIDDEN,))
        self.back = nn.Dense(2 * HIDDEN, HIDDEN)
        self.extra = nn.Dense(HIDDEN, HIDDEN) if bug == "added" else None

    def construct(self, x):
        x = self.back(self.norm(self.fc(x)))
        return self.extra(x) if self.extra is not None else x


class Port(nn.Cell):
    def __init__(self, width: int, bug: str) -> None:
        super().__init__()
        self.blocks = nn.CellList([Block(bug) for _ in range(width)])

    def construct(self, x):
        for block in self.blocks:
            x = block(x)
        return x


def original(width: int) -> dict[str, np.ndarray]:
    """The state dict of the original's stack of *width* blocks (Linear, LayerNorm, Linear)."""
    rng = np.random.default_rng(0)
    tensors: dict[str, np.ndarray] = {}
    for i in range(width):
        tensors[f"blocks.{i}.fc.weight"] = rng.standard_normal((2 * HIDDEN, HIDDEN)).astype(np.float32)
        tensors[f"blocks.{i}.fc.bias"] = np.zeros(2 * HIDDEN, np.float32)
        tensors[f"blocks.{i}.norm.weight"] = np.ones(2 * HIDDEN, np.float32)
        tensors[f"blocks.{i}.norm.bias"] = np.zeros(2 * HIDDEN, np.float32)
        tensors[f"blocks.{i}.back.weight"] = rng.standard_normal((HIDDEN, 2 * HIDDEN)).astype(np.float32)
        tensors[f"blocks.{i}.back.bias"] = np.zeros(HIDDEN, np.float32)
    return tensors


def findings(check_id: str, net: nn.Cell, reference: dict[str, np.ndarray]) -> list[graphaudit.Finding]:
    x = Tensor(np.ones((2, HIDDEN), np.float32))
    report = graphaudit.audit(net, inputs=x, reference=reference, select=[check_id])
    assert check_id in report.checks_run, report.skipped
    return [f for f in report.findings if f.check_id == check_id]


@pytest.mark.parametrize("width", WIDTHS)
def test_a_bias_left_out_of_every_block_is_one_ga630(width):
    found = findings("GA630", Port(width, "no-bias"), original(width))
    assert [(f.subject, len(f.subjects)) for f in found] == [("blocks", width)], found
    assert "a bias left out" in found[0].message


@pytest.mark.parametrize("width", WIDTHS)
def test_a_stack_cut_short_is_one_ga630(width):
    found = findings("GA630", Port(width, "none"), original(width + 2))
    assert [(f.subject, len(f.subjects)) for f in found] == [("blocks", 12)], found
    assert "a layer left out" in found[0].message


@pytest.mark.parametrize("width", WIDTHS)
def test_a_layer_added_to_every_block_is_one_ga631(width):
    found = findings("GA631", Port(width, "added"), original(width))
    assert [(f.subject, len(f.subjects)) for f in found] == [("blocks", 2 * width)], found


@pytest.mark.parametrize("width", WIDTHS)
def test_a_weight_kept_transposed_in_every_block_is_one_ga632(width):
    found = findings("GA632", Port(width, "transposed"), original(width))
    assert [(f.subject, len(f.subjects)) for f in found] == [("blocks", width)], found
    assert "only transposed" in found[0].message

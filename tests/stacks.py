"""A stack of Dense layers of any depth and a batch for it: one mistake over N layers.

tests/test_one_cause_one_finding.py and tests/test_one_cause_probe.py hold the checks to "one
cause, one finding" on it.
"""

from __future__ import annotations

import numpy as np
from mindspore import Tensor, nn, ops


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

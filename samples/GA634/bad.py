"""GA634 bad: a two-layer MLP audited against the original of another network (the small CNN of
samples/GA630/original.safetensors): almost nothing pairs."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent.parent / "GA630" / "original.safetensors"


class Mlp(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.hidden = nn.Dense(20, 32)
        self.out = nn.Dense(32, 3)
        self.relu = nn.ReLU()

    def construct(self, x):
        return self.out(self.relu(self.hidden(x)))


SUBJECT = "(root)"


def build() -> dict:
    x = Tensor(np.random.default_rng(0).standard_normal((4, 20)).astype(np.float32))
    return {"net": Mlp(), "inputs": x, "reference": str(ORIGINAL)}  # <- SARIF

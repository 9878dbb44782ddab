"""GA630 bad: a port of a small PyTorch CNN (original.safetensors) whose fc1 lost its bias:
the original's nn.Linear(8, 16) has one, the port's Dense(8, 16, has_bias=False) does not."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent / "original.safetensors"


class Port(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Dense(8, 16, has_bias=False)  # the original's Linear has a bias  # <- SARIF
        self.fc2 = nn.Dense(16, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc2(self.relu(self.fc1(x)))


SUBJECT = "fc1"


def build() -> dict:
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}

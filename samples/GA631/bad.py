"""GA631 bad: a port of a small PyTorch CNN (samples/GA630/original.safetensors) with a layer
the original does not have: a Dense(16, 16) between fc1 and fc2."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent.parent / "GA630" / "original.safetensors"


class Port(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = nn.Dense(8, 16)
        self.mid = nn.Dense(16, 16)  # not in the original  # <- SARIF
        self.fc2 = nn.Dense(16, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc2(self.relu(self.mid(self.relu(self.fc1(x)))))


SUBJECT = "mid"


def build() -> dict:
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}

"""GA640 good: a faithful port of a small PyTorch CNN (original/, dumped by python -m graphaudit.reference):
with the original's weights, every cell computes what the original's module computed."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent / "original"


class Port(nn.Cell):
    """The original: Conv2d(3, 4, 3, padding=1), BatchNorm2d(4), ReLU, MaxPool2d(2), flatten, Linear(64, 10)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Dense(4 * 4 * 4, 10)
        self.act = nn.ReLU()

    def construct(self, x):
        x = self.pool(self.act(self.bn(self.conv(x))))
        return self.fc(x.reshape(x.shape[0], -1))  # (N, C, H, W) flattened as PyTorch does


def build() -> dict:
    x = Tensor(np.load(ORIGINAL / "inputs.npz")["0"])
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}

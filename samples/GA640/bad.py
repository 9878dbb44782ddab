"""GA640 bad: a port of a small PyTorch CNN (original/, dumped by python -m graphaudit.reference)
that flattens its feature map channels-last, as a TensorFlow or NHWC port would: every weight
pairs and has its shape, yet with the original's weights the classifier sees its inputs in
another order."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent / "original"


class Port(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4)
        self.pool = nn.MaxPool2d(2, 2)
        self.fc = nn.Dense(4 * 4 * 4, 10)
        self.act = nn.ReLU()

    def construct(self, x):
        x = self.pool(self.act(self.bn(self.conv(x))))
        return self.fc(x.transpose(0, 2, 3, 1).reshape(x.shape[0], -1))  # PyTorch flattens (N, C, H, W)


SUBJECT = "(root)"


def build() -> dict:
    x = Tensor(np.load(ORIGINAL / "inputs.npz")["0"])
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}  # <- SARIF

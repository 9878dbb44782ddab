"""GA636 bad: a port of a small PyTorch CNN (../GA635/original/, dumped with each module's attributes)
whose nn.GELU() is MindSpore's default, the tanh approximation, where the original's
torch.nn.GELU() is the exact erf."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent.parent / "GA635" / "original"  # one original for GA635-GA638


class Port(nn.Cell):
    """The original: Conv2d(3, 8, 3, padding=1), BatchNorm2d(8), GELU(), MaxPool2d(3, 2, 1, ceil_mode=True),
    AvgPool2d(3, 1, 1, count_include_pad=False), Linear(200, 16), LayerNorm(16, eps=1e-12), Dropout(0.1), Linear(16, 4)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(8, momentum=0.9)
        self.act = nn.GELU()  # MindSpore's default: the tanh approximation  # <- SARIF
        self.pool = nn.MaxPool2d(3, 2, pad_mode="pad", padding=1, ceil_mode=True)
        self.avg = nn.AvgPool2d(3, 1, pad_mode="pad", padding=1, count_include_pad=False)
        self.fc = nn.Dense(8 * 5 * 5, 16)
        self.norm = nn.LayerNorm((16,), epsilon=1e-12)
        self.drop = nn.Dropout(p=0.1)
        self.head = nn.Dense(16, 4)

    def construct(self, x):
        x = self.avg(self.pool(self.act(self.bn(self.conv(x)))))
        return self.head(self.drop(self.norm(self.fc(x.reshape(x.shape[0], -1)))))


SUBJECT = "act"


def build() -> dict:
    x = Tensor(np.load(ORIGINAL / "inputs.npz")["0"])
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}

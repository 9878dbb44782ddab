"""GA711 bad: torch.nn.MaxPool2d(2) ported as nn.MaxPool2d(2): MindSpore's stride is 1, 8x8 becomes 7x7."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "pool"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2)  # <- SARIF
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        h = self.gap(self.pool(self.relu(self.conv(x))))
        return self.head(h.reshape(x.shape[0], -1))


def build() -> dict:
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return {"net": Net(), "inputs": x}

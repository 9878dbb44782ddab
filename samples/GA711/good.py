"""GA711 good: the stride written out: nn.MaxPool2d(kernel_size=2, stride=2) halves the map; a global pooling of stride 1 is not reported."""

import numpy as np
from mindspore import Tensor, nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.gap = nn.AvgPool2d(kernel_size=4)  # 4x4 -> 1x1: global
        self.head = nn.Dense(8, 4)

    def construct(self, x):
        h = self.gap(self.pool(self.relu(self.conv(x))))
        return self.head(h.reshape(x.shape[0], -1))


def build() -> dict:
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return {"net": Net(), "inputs": x}

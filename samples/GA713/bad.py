"""GA713 bad: an in-place write through an alias: PyNative changes both names, GRAPH_MODE copies."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.out = nn.Dense(3, 3)

    def construct(self, x):
        h = self.fc(x)
        g = h
        g[:, 0] = 0.0  # PyNative: h changes too; GRAPH_MODE: only g
        return self.out(h) + g


def build() -> dict:
    x = Tensor(np.arange(8).reshape(2, 4).astype(np.float32))
    return {"net": Net(), "inputs": x, "graph_mode": True}  # <- SARIF

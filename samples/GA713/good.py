"""GA713 good: the same computation written functionally: both modes agree."""

import numpy as np
from mindspore import Tensor, nn, ops


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.out = nn.Dense(3, 3)

    def construct(self, x):
        h = self.fc(x)
        g = ops.concat((ops.zeros_like(h[:, :1]), h[:, 1:]), axis=1)
        return self.out(h) + g


def build() -> dict:
    x = Tensor(np.arange(8).reshape(2, 4).astype(np.float32))
    return {"net": Net(), "inputs": x, "graph_mode": True}

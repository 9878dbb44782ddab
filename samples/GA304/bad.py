"""GA304 bad: the residual around ``block`` was forgotten, so ``stem`` no longer feeds ``head``."""

import numpy as np
from mindspore import Tensor, nn, ops

from graphaudit import Spec

SUBJECT = "stem"

DESIGN = Spec(expected_connections=[("stem", "block"), ("stem", "head"), ("block", "head")])


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 8)  # <- SARIF
        self.block = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU()])
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        x = ops.relu(self.stem(x))
        x = self.block(x)  # the bug: meant x = x + self.block(x)
        return self.head(x)


def build() -> dict:
    net = Net()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
        "spec": DESIGN,
    }

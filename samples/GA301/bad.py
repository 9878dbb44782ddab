"""GA301 bad: ``fc2`` is defined in __init__ and forgotten in construct."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "fc2"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(4, 8)
        self.fc2 = nn.Dense(8, 8)  # <- SARIF
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        return self.head(ops.relu(self.fc1(x)))


def build() -> dict:
    net = Net()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
    }

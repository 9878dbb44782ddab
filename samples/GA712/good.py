"""GA712 good: the same block without try/except: forward pass and training step compile in GRAPH_MODE."""

import numpy as np
from mindspore import Tensor, nn


class Block(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        return self.fc(x)


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()
        self.head = nn.Dense(4, 3)

    def construct(self, x):
        return self.head(self.block(x))


def build() -> dict:
    net = Net()
    x = Tensor(np.ones((2, 4), np.float32))
    y = Tensor(np.array([0, 1], np.int32))
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), 0.1),
        "inputs": x,
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
        "graph_mode": True,
    }

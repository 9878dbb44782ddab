"""GA712 bad: a block whose construct uses try/except: it runs in PyNative, and does not compile in GRAPH_MODE."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "block"


class Block(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x):
        try:
            y = self.fc(x)
        except ValueError:
            y = x
        return y


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.block = Block()  # <- SARIF
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

"""GA303 good: the hidden layers are in a CellList, registered with the network."""

import numpy as np
from mindspore import Tensor, nn, ops


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 8)
        self.hidden = nn.CellList([nn.Dense(8, 8) for _ in range(2)])
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        x = ops.relu(self.stem(x))
        for layer in self.hidden:
            x = ops.relu(layer(x))
        return self.head(x)


def build() -> dict:
    net = Net()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
    }

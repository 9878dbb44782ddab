"""GA303 bad: the hidden layers are kept in a plain Python list, so MindSpore never registers them."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "hidden[1]"


class Net(nn.Cell):
    def __init__(self, width: int = 2) -> None:
        super().__init__()
        self.stem = nn.Dense(4, 8)
        self.hidden = [nn.Dense(8, 8) for _ in range(width)]  # <- SARIF
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        x = ops.relu(self.stem(x))
        for layer in self.hidden:
            x = ops.relu(layer(x))
        return self.head(x)


def build(width: int = 2) -> dict:
    """*width*: how many layers the plain list holds (tests/test_widened_samples.py widens it)."""
    net = Net(width)
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
    }

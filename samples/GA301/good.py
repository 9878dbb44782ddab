"""GA301 good: every cell is used, one through a method other than construct, one by weight."""

import numpy as np
from mindspore import Tensor, nn, ops


class Encoder(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Dense(4, 8)

    def encode(self, x):
        return ops.relu(self.proj(x))


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = Encoder()  # never called itself: its encode() calls its sub-cell
        self.embed = nn.Dense(8, 8, has_bias=False)  # only its weight is used, in a functional matmul
        self.head = nn.Dense(8, 2)
        self.act = nn.ReLU()  # no parameters: not this check's business even if unused

    def construct(self, x):
        x = self.encoder.encode(x)
        return self.head(ops.matmul(x, self.embed.weight))


def build() -> dict:
    net = Net()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
    }

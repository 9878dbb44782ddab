"""GA309 good: the same depth with a BatchNorm before every sigmoid, and a shallow tanh MLP."""

import numpy as np
from mindspore import Tensor, nn


class NormalisedSigmoid(nn.Cell):
    def __init__(self, depth: int = 6) -> None:
        super().__init__()
        cells = [nn.Dense(32, 64), nn.BatchNorm1d(64), nn.Sigmoid()]
        for _ in range(depth - 1):
            cells += [nn.Dense(64, 64), nn.BatchNorm1d(64), nn.Sigmoid()]
        self.layers = nn.SequentialCell(cells)
        self.policy = nn.SequentialCell([nn.Dense(64, 64), nn.Tanh(), nn.Dense(64, 64), nn.Tanh()])
        self.head = nn.Dense(64, 10)

    def construct(self, x):
        return self.head(self.policy(self.layers(x)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = NormalisedSigmoid()
    x = Tensor(rng.standard_normal((16, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 16).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), 0.05),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

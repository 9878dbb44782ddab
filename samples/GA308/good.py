"""GA308 good: the activation between fc1 and fc2, and a low-rank factorisation declared in the spec."""

import numpy as np
from mindspore import Tensor, nn

import graphaudit


class MLP(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(20, 64)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(64, 64)
        self.act = nn.ReLU()
        self.down = nn.Dense(64, 8)  # a rank-8 factorisation of a 64x64 map, meant linear
        self.up = nn.Dense(8, 64)
        self.head = nn.Dense(64, 10)

    def construct(self, x):
        x = self.act(self.fc2(self.relu(self.fc1(x))))
        x = self.act(self.up(self.down(x)))
        return self.head(x)


def build() -> dict:
    rng = np.random.default_rng(0)
    net = MLP()
    x = Tensor(rng.standard_normal((8, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 8).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
        "spec": graphaudit.Spec(linear_connections=[("down", "up")]),
    }

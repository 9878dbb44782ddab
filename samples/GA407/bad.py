"""GA407 bad: a classifier whose last Dense has activation="tanh", trained with CrossEntropyLoss."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "CrossEntropyLoss"


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU()])
        self.head = nn.Dense(32, 10, activation="tanh")  # <- SARIF

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 16).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

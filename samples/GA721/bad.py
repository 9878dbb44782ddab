"""GA721 bad: the SGD recipe's learning rate, 0.1, carried over to Adam."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "Adam"


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU()])
        self.head = nn.Dense(32, 10)

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 16).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), learning_rate=0.1),  # <- SARIF
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

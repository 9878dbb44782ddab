"""GA311 bad: a 100-class head behind a 4-unit hidden layer (meant: 400)."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "head.2"


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell([nn.Dense(64, 256), nn.ReLU()])
        self.head = nn.SequentialCell([nn.Dense(256, 4), nn.ReLU(), nn.Dense(4, 100)])  # <- SARIF

    def construct(self, x):
        return self.head(self.features(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier()
    x = Tensor(rng.standard_normal((8, 64)).astype(np.float32))
    y = Tensor(rng.integers(0, 100, 8).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

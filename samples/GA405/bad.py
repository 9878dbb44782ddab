"""GA405 bad: digits (one class per sample, one-hot) trained with a binary cross-entropy."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "BCEWithLogitsLoss"


class Classifier(nn.Cell):
    """A 3-layer MLP over 20 features."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU()])
        self.head = nn.Dense(32, classes)

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)]
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(y),
        "loss_fn": nn.BCEWithLogitsLoss(),  # <- SARIF
    }

"""GA408 bad: a binary classifier with a one-unit head, trained with CrossEntropyLoss on labels 0/1."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "CrossEntropyLoss"


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
    net = Classifier(classes=1)
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 2, 16).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),  # <- SARIF
    }

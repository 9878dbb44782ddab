"""GA052 bad: rows without a class are marked -1 in the labels, and CrossEntropyLoss ignores -100, not -1."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "label"


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
    y = rng.integers(0, 10, 16)
    y[[3, 11]] = -1  # "no class": read as class 9 (the gather counts from the end), without a word
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(y.astype(np.int32)),
        "loss_fn": nn.CrossEntropyLoss(),
    }

"""GA407 warning: a classifier whose last Dense has activation="relu", trained with CrossEntropyLoss.

The softmax inside CrossEntropyLoss expects raw logits; a ReLU before it clips every negative
logit to 0 and drops its gradient. The loss can still rank the classes by their positive
logits, so training limps on rather than failing (a tanh or sigmoid there, which caps the
confidence, is the error): a warning.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "CrossEntropyLoss"


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU()])
        self.head = nn.Dense(32, 10, activation="relu")

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

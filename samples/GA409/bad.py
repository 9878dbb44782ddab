"""GA409 bad: ten exclusive classes, one-hot, trained with MSELoss on the softmax of the scores."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "MSELoss"


class Classifier(nn.Cell):
    """A 3-layer MLP over 20 features."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU()])
        self.head = nn.Dense(32, classes)

    def construct(self, x):
        return self.head(self.body(x))


class Probabilities(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.scores = Classifier()

    def construct(self, x):
        return ops.softmax(self.scores(x), axis=-1)


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Probabilities()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = np.eye(10, dtype=np.float32)[rng.integers(0, 10, 16)]
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(y),
        "loss_fn": nn.MSELoss(),  # <- SARIF
    }

"""GA401 bad: the head's Dense has activation="sigmoid", and the loss is BCEWithLogitsLoss."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "BCEWithLogitsLoss"


class Detector(nn.Cell):
    """A binary classifier over 16 features; the score head squashes its output."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 8), nn.ReLU()])
        self.score = nn.Dense(8, 1, activation="sigmoid")  # <- SARIF

    def construct(self, x):
        return self.score(self.body(x)).squeeze(-1)


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Detector()
    loss_net = nn.WithLossCell(net, nn.BCEWithLogitsLoss())
    train = nn.TrainOneStepCell(loss_net, nn.Adam(net.trainable_params(), 1e-3))
    x = Tensor(rng.standard_normal((8, 16)).astype(np.float32))
    y = Tensor(rng.integers(0, 2, (8,)).astype(np.float32))
    return {"net": train, "inputs": (x, y)}

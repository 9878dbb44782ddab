"""GA402 good: the same tagger ends with nn.Sigmoid, so BCELoss gets probabilities."""

import numpy as np
from mindspore import Tensor, nn


class Tagger(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [nn.Conv2d(2, 4, 3, pad_mode="same"), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten()]
        )
        self.head = nn.SequentialCell([nn.Dense(4 * 8 * 8, 5), nn.Sigmoid()])

    def construct(self, x):
        return self.head(self.features(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Tagger()
    x = Tensor(rng.standard_normal((4, 2, 8, 8)).astype(np.float32))
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), 0.01),
        "loss_fn": nn.BCELoss(reduction="mean"),
        "inputs": x,
    }

"""GA720 good: the same CNN with the batch of 16 images it trains on."""

import numpy as np
from mindspore import Tensor, nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [
                nn.Conv2d(3, 16, 3),
                nn.BatchNorm2d(16),
                nn.ReLU(),
                nn.Conv2d(16, 32, 3),
                nn.BatchNorm2d(32),
                nn.ReLU(),
            ]
        )
        self.flatten = nn.Flatten()
        self.head = nn.Dense(32 * 16 * 16, 10)

    def construct(self, x):
        return self.head(self.flatten(self.features(x)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Net()
    net.set_train(True)
    x = Tensor(rng.standard_normal((16, 3, 16, 16)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 16).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

"""GA314 bad: nn.Conv2d(32, 1, 3) typed for nn.Conv2d(32, 64, 3): the CNN goes through a 1-channel map."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "features.3"


class Net(nn.Cell):
    def __init__(self, narrow: int = 1) -> None:
        super().__init__()
        self.features = nn.SequentialCell(  # <- SARIF
            [
                nn.Conv2d(3, 32, 3),
                nn.BatchNorm2d(32),
                nn.ReLU(),
                nn.Conv2d(32, narrow, 3),
                nn.BatchNorm2d(narrow),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
                nn.Conv2d(narrow, 64, 3),
                nn.ReLU(),
            ]
        )
        self.flatten = nn.Flatten()
        self.head = nn.Dense(64 * 8 * 8, 10)

    def construct(self, x):
        return self.head(self.flatten(self.features(x)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Net()
    x = Tensor(rng.standard_normal((4, 3, 16, 16)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

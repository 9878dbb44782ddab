"""GA720 bad: a CNN with BatchNorm audited (and trained) with a batch of one image."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "features.1"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(  # <- SARIF
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


def build(batch: int = 1) -> dict:
    rng = np.random.default_rng(0)
    net = Net()
    net.set_train(True)
    x = Tensor(rng.standard_normal((batch, 3, 16, 16)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, batch).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

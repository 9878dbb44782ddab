"""GA318 bad: a tutorial CNN with 4x4 kernels at stride 1."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "conv1"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 4)  # <- SARIF
        self.conv2 = nn.Conv2d(16, 32, 4)
        self.pool = nn.MaxPool2d(2, 2)
        self.relu = nn.ReLU()
        self.head = nn.Dense(32, 10)

    def construct(self, x):
        x = self.pool(self.relu(self.conv1(x)))
        x = self.pool(self.relu(self.conv2(x)))
        return self.head(ops.mean(x, (2, 3)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Net()
    x = Tensor(rng.standard_normal((4, 3, 32, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

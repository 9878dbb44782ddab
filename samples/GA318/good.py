"""GA318 good: the same CNN with 3x3 kernels, and a 2x2 stride-2 downsampling convolution."""

import numpy as np
from mindspore import Tensor, nn, ops


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(3, 16, 3)
        self.conv2 = nn.Conv2d(16, 32, 2, stride=2)
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

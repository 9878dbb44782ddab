"""GA314 good: 64 channels in the middle, and a 1-channel spatial-attention map that gates the features."""

import numpy as np
from mindspore import Tensor, nn, ops


class SpatialAttention(nn.Cell):
    """CBAM's spatial attention: a 1-channel map through a sigmoid, multiplied into the features."""

    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, 1, 7)

    def construct(self, x):
        return x * ops.sigmoid(self.conv(x))


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [
                nn.Conv2d(3, 32, 3),
                nn.BatchNorm2d(32),
                nn.ReLU(),
                nn.Conv2d(32, 64, 3),
                nn.BatchNorm2d(64),
                nn.ReLU(),
                SpatialAttention(64),
                nn.MaxPool2d(2, 2),
                nn.Conv2d(64, 64, 3),
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

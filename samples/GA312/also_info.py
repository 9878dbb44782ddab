"""GA312 info: four stride-2 convolutions take a 16x16 image to 1x1, and one 3x3 convolution follows.

A network designed for larger images fed small ones: the last 3x3 convolution runs on a 1x1
map and uses only its centre tap. One such layer wastes little (three or more is a warning):
info.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "stages.3"


def conv(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1)


class Small(nn.Cell):
    """Channels double while the map halves: 16, 8, 4, 2, 1."""

    def __init__(self) -> None:
        super().__init__()
        widths = [3, 8, 16, 32, 32]
        self.stages = nn.CellList([conv(widths[i], widths[i + 1], stride=2) for i in range(4)])
        self.tail = conv(32, 32)
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.head = nn.Dense(32, 10)

    def construct(self, x):
        for layer in self.stages:
            x = self.relu(layer(x))
        x = self.relu(self.tail(x))
        return self.head(self.flatten(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Small()
    x = Tensor(rng.standard_normal((4, 3, 16, 16)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

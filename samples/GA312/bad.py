"""GA312 bad: five stride-2 convolutions take a 32x32 image to 1x1, and three 3x3 convolutions still follow."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "stages.4"


def conv(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1)


class TooDeepForCifar(nn.Cell):
    """Channels double while the map halves: 32, 16, 8, 4, 2, 1."""

    def __init__(self) -> None:
        super().__init__()
        widths = [3, 16, 32, 64, 64, 128]
        self.stages = nn.CellList([conv(widths[i], widths[i + 1], stride=2) for i in range(5)])  # <- SARIF
        self.tail = nn.CellList([conv(128, 128) for _ in range(3)])
        self.relu = nn.ReLU()
        self.flatten = nn.Flatten()
        self.head = nn.Dense(128, 10)

    def construct(self, x):
        for layer in self.stages:
            x = self.relu(layer(x))
        for layer in self.tail:
            x = self.relu(layer(x))
        return self.head(self.flatten(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = TooDeepForCifar()
    x = Tensor(rng.standard_normal((4, 3, 32, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

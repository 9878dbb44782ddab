"""GA312 good: three strides take the 32x32 image to 4x4; the 3x3 convolutions run there, then a global pool."""

import numpy as np
from mindspore import Tensor, nn, ops


def conv(cin: int, cout: int, stride: int = 1) -> nn.Conv2d:
    return nn.Conv2d(cin, cout, 3, stride=stride, pad_mode="pad", padding=1)


class SizedForCifar(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        widths = [3, 32, 64, 128]
        self.stages = nn.CellList([conv(widths[i], widths[i + 1], stride=2) for i in range(3)])
        self.tail = nn.CellList([conv(128, 128) for _ in range(3)])
        self.relu = nn.ReLU()
        self.head = nn.Dense(128, 10)

    def construct(self, x):
        for layer in self.stages:
            x = self.relu(layer(x))
        for layer in self.tail:
            x = self.relu(layer(x))
        return self.head(ops.mean(x, (2, 3)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = SizedForCifar()
    x = Tensor(rng.standard_normal((4, 3, 32, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

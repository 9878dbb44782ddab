"""GA313 bad: a 7x7 convolution on the 3x3 map that two stride-2 convolutions leave of a 12x12 input."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "body.4"


class Net(nn.Cell):
    def __init__(self, kernel: int = 7) -> None:
        super().__init__()
        self.body = nn.SequentialCell(  # <- SARIF
            [
                nn.Conv2d(1, 16, 3, stride=2, pad_mode="pad", padding=1),
                nn.ReLU(),
                nn.Conv2d(16, 32, 3, stride=2, pad_mode="pad", padding=1),
                nn.ReLU(),
                nn.Conv2d(32, 32, kernel, pad_mode="same"),
                nn.ReLU(),
            ]
        )
        self.flatten = nn.Flatten()
        self.head = nn.Dense(32 * 3 * 3, 10)

    def construct(self, x):
        return self.head(self.flatten(self.body(x)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Net()
    x = Tensor(rng.standard_normal((4, 1, 12, 12)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

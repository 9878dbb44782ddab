"""GA316 bad: kernel_size and stride swapped: MaxPool2d(2, 4) reads one position in four."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "2"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(  # <- SARIF
        [
            nn.Conv2d(3, 8, 3),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=2, stride=4),
            nn.Conv2d(8, 16, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Dense(16 * 4 * 4, 10),
        ]
    )
    x = Tensor(rng.standard_normal((4, 3, 32, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

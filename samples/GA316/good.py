"""GA316 good: 2x2 windows with stride 2 (and an overlapping 3x3 window with stride 2)."""

import numpy as np
from mindspore import Tensor, nn


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(
        [
            nn.Conv2d(3, 8, 3),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=3, stride=2, pad_mode="same"),
            nn.Conv2d(8, 16, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Dense(16 * 8 * 8, 10),
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

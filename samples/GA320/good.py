"""GA320 good: the Keras CIFAR-10 example's widths: 32 then 64 filters, each block pooled."""

import numpy as np
from mindspore import Tensor, nn


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(
        [
            nn.Conv2d(3, 32, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(32, 64, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Dense(64 * 8 * 8, 10),
        ]
    )
    x = Tensor(rng.standard_normal((4, 3, 32, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

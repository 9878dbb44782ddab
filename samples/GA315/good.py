"""GA315 good: the same four convolutions with a 2x2 max pooling after each pair: the head reads a 16x16 map."""

import numpy as np
from mindspore import Tensor, nn


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(
        [
            nn.Conv2d(3, 8, 3),
            nn.ReLU(),
            nn.Conv2d(8, 8, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(8, 8, 3),
            nn.ReLU(),
            nn.Conv2d(8, 8, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Dense(8 * 16 * 16, 10),
        ]
    )
    x = Tensor(rng.standard_normal((4, 3, 64, 64)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

"""GA315 bad: four 3x3 convolutions at the full 64x64 resolution, no stride or pooling, then flatten into a Dense."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "6"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(  # <- SARIF
        [
            nn.Conv2d(3, 8, 3),
            nn.ReLU(),
            nn.Conv2d(8, 8, 3),
            nn.ReLU(),
            nn.Conv2d(8, 8, 3),
            nn.ReLU(),
            nn.Conv2d(8, 8, 3),
            nn.ReLU(),
            nn.Flatten(),
            nn.Dense(8 * 64 * 64, 10),
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

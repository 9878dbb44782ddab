"""GA309 info: one convolution of a CNN with a sigmoid as its hidden activation (the others use ReLU).

A Keras port of ``Conv2D(32, 3, activation="sigmoid")`` in an otherwise ReLU trunk: the sigmoid's
outputs are all positive and its derivative at most 1/4, so the layers before it learn slowly.
One such layer is likely a mistake rather than certainly one (two or more are a warning): info.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "3"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(
        [
            nn.Conv2d(3, 32, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            nn.Conv2d(32, 32, 3),
            nn.Sigmoid(),
            nn.MaxPool2d(2, 2),
            nn.Flatten(),
            nn.Dense(32 * 8 * 8, 10),
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

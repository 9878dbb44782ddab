"""GA316 info: MaxPool2d(4, 4) shrinks a 30x30 map to 7x7 in one step, and a 3x3 convolution follows.

Every position is still read (the stride equals the window), so nothing is skipped (that is the
warning); but a 4x jump discards the detail the following convolution is meant to combine.
Common in small networks and not always wrong: info.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "2"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(
        [
            nn.Conv2d(3, 8, 3, pad_mode="valid"),
            nn.ReLU(),
            nn.MaxPool2d(kernel_size=4, stride=4),
            nn.Conv2d(8, 16, 3, pad_mode="valid"),
            nn.ReLU(),
            nn.Flatten(),
            nn.Dense(16 * 5 * 5, 10),
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

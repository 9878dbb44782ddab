"""GA320 bad: a CIFAR-10 tutorial CNN shrunk to one convolution of 4 filters: fewer features than its 10 classes."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "0"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell(  # <- SARIF
        [nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Flatten(), nn.Dense(4 * 16 * 16, 10)]
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

"""GA319 bad: a Keras VGG-style CIFAR-10 port whose second block's MaxPooling2D was forgotten: 6 convolutions at 16x16."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "5"


def build(width: int = 1) -> dict:
    """*width* stages of six convolutions, each missing the pooling in its middle (one finding each)."""
    rng = np.random.default_rng(0)
    stack = []
    for stage in range(width):
        for i in range(6):  # two VGG blocks of 64 filters, and the pooling between them lost
            stack += [nn.Conv2d(32 if stage == i == 0 else 64, 64, 3), nn.ReLU()]
        stack += [nn.MaxPool2d(2, 2)]
    net = nn.SequentialCell(  # <- SARIF
        [
            nn.Conv2d(3, 32, 3),
            nn.ReLU(),
            nn.Conv2d(32, 32, 3),
            nn.ReLU(),
            nn.MaxPool2d(2, 2),
            *stack,
            nn.Flatten(),
            nn.Dense(64 * (16 >> width) ** 2, 10),
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

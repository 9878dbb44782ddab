"""GA319 good: the same VGG-style CIFAR-10 network, each block of two convolutions ending in its pooling."""

import numpy as np
from mindspore import Tensor, nn


def build() -> dict:
    rng = np.random.default_rng(0)
    blocks = []
    for i in range(3):  # 32x32 -> 16 -> 8 -> 4, as VGG halves the map after every block
        width_in = 3 if i == 0 else 32 * min(i, 2)
        width = 32 * min(i + 1, 2)
        blocks += [nn.Conv2d(width_in, width, 3), nn.ReLU(), nn.Conv2d(width, width, 3), nn.ReLU()]
        blocks.append(nn.MaxPool2d(2, 2))
    net = nn.SequentialCell([*blocks, nn.Flatten(), nn.Dense(64 * 4 * 4, 10)])
    x = Tensor(rng.standard_normal((4, 3, 32, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

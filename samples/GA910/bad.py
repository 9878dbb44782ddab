"""GA910 bad: twelve sigmoid layers: the first layer's relative gradient is 1e-9 of the last one's."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

SUBJECT = "0.weight"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    return x, Tensor((np.arange(16) % 4).astype(np.int32))


def build() -> dict:
    x, y = batch()
    ms.set_seed(0)
    layers, width = [], 16
    for _ in range(12):
        layers += [nn.Dense(width, 64), nn.Sigmoid()]
        width = 64
    net = nn.SequentialCell([*layers, nn.Dense(64, 4)])  # <- SARIF
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), learning_rate=0.1),
        "loss_fn": nn.CrossEntropyLoss(),
        "inputs": x,
        "label": y,
        "probe": 2,
    }

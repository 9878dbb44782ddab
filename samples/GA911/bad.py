"""GA911 bad: ten ReLU layers initialised with Normal(1.0): gradients millions of times the weights."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn
from mindspore.common.initializer import Normal

SUBJECT = "20.weight"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    return x, Tensor((np.arange(16) % 4).astype(np.int32))


def build() -> dict:
    x, y = batch()
    ms.set_seed(0)
    layers, width = [], 16
    for _ in range(10):
        layers += [nn.Dense(width, 32, weight_init=Normal(1.0)), nn.ReLU()]
        width = 32
    net = nn.SequentialCell([*layers, nn.Dense(32, 4, weight_init=Normal(1.0))])  # <- SARIF
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), learning_rate=1e-3),
        "loss_fn": nn.CrossEntropyLoss(),
        "inputs": x,
        "label": y,
        "probe": 2,
    }

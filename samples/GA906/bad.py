"""GA906 bad: a learning rate of 1e-7: five steps on one batch leave the loss where it was."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    return x, Tensor((np.arange(16) % 4).astype(np.int32))


def mlp() -> nn.Cell:
    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(16, 64), nn.ReLU(), nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 4)])


def build() -> dict:
    x, y = batch()
    net = mlp()  # <- SARIF
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), learning_rate=1e-7),
        "loss_fn": nn.CrossEntropyLoss(),
        "inputs": x,
        "label": y,
        "probe": 5,
    }

"""GA908 bad: regression targets left in their raw units (about 1000): SGD at 0.01 moves the weights by ~3.5x their norm.

The rate is a usual one for SGD (GA721 says nothing); the mean squared error of targets that
large makes gradients that large, and each step replaces the weights. (With a rate far off its
range, SGD at 10 say, GA721 reports it and this finding joins GA721's. Probed for five steps
instead of three, the loss grows ten-thousandfold and GA907 makes the finding an error.)
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    return x, Tensor((rng.standard_normal((16, 4)) * 1000).astype(np.float32))  # not standardised


def mlp() -> nn.Cell:
    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(16, 64), nn.ReLU(), nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 4)])


def build() -> dict:
    x, y = batch()
    net = mlp()  # <- SARIF
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), learning_rate=0.01),
        "loss_fn": nn.MSELoss(),
        "inputs": x,
        "label": y,
        "probe": 3,
    }

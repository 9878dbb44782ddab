"""GA907 bad: regression targets left in their raw units (about 25): at SGD 0.1 the loss climbs 440-fold in five steps.

The rate is a usual one for SGD (GA721 says nothing) and the median update stays below the
weights' size (GA908 says nothing); the loss curve shows the overshoot. (When GA908 or GA721
report the rate, this finding joins theirs.)
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    return x, Tensor((rng.standard_normal((16, 4)) * 25).astype(np.float32))  # not standardised


def mlp() -> nn.Cell:
    ms.set_seed(0)
    return nn.SequentialCell([nn.Dense(16, 64), nn.ReLU(), nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 4)])


def build() -> dict:
    x, y = batch()
    net = mlp()  # <- SARIF
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), learning_rate=0.1),
        "loss_fn": nn.MSELoss(),
        "inputs": x,
        "label": y,
        "probe": 5,
    }

"""GA904 bad: a branch behind stop_gradient never receives a gradient."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "aux.weight"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    return Tensor(rng.standard_normal((4, 4)).astype(np.float32)), Tensor(
        rng.standard_normal((4, 3)).astype(np.float32)
    )


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)
        self.aux = nn.Dense(4, 3)  # <- SARIF

    def construct(self, x):
        return self.fc(x) + ops.stop_gradient(self.aux(x))


def build() -> dict:
    x, y = batch()
    net = Net()
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 0.001),
        "loss_fn": nn.MSELoss(),
        "inputs": x,
        "label": y,
        "probe": True,
    }

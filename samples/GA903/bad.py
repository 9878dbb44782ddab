"""GA903 bad: log of a value that is negative on the batch: NaN loss and gradients."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "fc.weight"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    return Tensor(rng.standard_normal((4, 4)).astype(np.float32)), Tensor(
        rng.standard_normal((4, 3)).astype(np.float32)
    )


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 3)  # <- SARIF

    def construct(self, x):
        return ops.log(self.fc(x) - 100.0)


def build() -> dict:
    x, y = batch()
    net = Net()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), 0.1),
        "loss_fn": nn.MSELoss(),
        "inputs": x,
        "label": y,
        "probe": True,
    }

"""GA905 bad: the head is left out of the optimizer; one real step confirms it does not train."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "head.weight"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    return Tensor(rng.standard_normal((4, 4)).astype(np.float32)), Tensor(
        rng.standard_normal((4, 3)).astype(np.float32)
    )


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.head = nn.Dense(8, 3)

    def construct(self, x):
        return self.head(self.backbone(x))


def build() -> dict:
    x, y = batch()
    net = Net()
    optimizer = nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)  # <- SARIF
    return {
        "net": net,
        "optimizer": optimizer,
        "loss_fn": nn.MSELoss(),
        "inputs": x,
        "label": y,
        "probe": True,
    }

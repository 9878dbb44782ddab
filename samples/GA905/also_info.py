"""GA905 info: a backbone declared frozen (Spec(frozen=...)) and left out of the optimizer; one real step confirms it.

The backbone keeps requires_grad=True but is not in the optimizer, and the probe's training
step leaves it unchanged, as the design declares (frozen pretrained features): no bug, only a
gradient computed and thrown away every step. Info.
"""

import numpy as np
from mindspore import Tensor, nn

from graphaudit import Spec

SUBJECT = "backbone.weight"


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
    optimizer = nn.Momentum(net.head.trainable_params(), 0.01, 0.9)
    return {
        "net": net,
        "optimizer": optimizer,
        "loss_fn": nn.MSELoss(),
        "inputs": x,
        "label": y,
        "probe": True,
        "spec": Spec(frozen=["backbone.*"]),
    }

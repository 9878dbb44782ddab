"""GA902 bad: a frozen weight handed to an optimizer with weight decay shrinks every step."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "0.weight"


def batch() -> tuple:
    rng = np.random.default_rng(0)
    return Tensor(rng.standard_normal((4, 4)).astype(np.float32)), Tensor(
        rng.standard_normal((4, 3)).astype(np.float32)
    )


def build() -> dict:
    x, y = batch()
    net = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU(), nn.Dense(8, 3)])  # <- SARIF
    net[0].weight.requires_grad = False
    optimizer = nn.SGD(net.get_parameters(), 0.1, weight_decay=0.1)
    return {
        "net": net,
        "optimizer": optimizer,
        "loss_fn": nn.MSELoss(),
        "inputs": x,
        "label": y,
        "probe": True,
    }

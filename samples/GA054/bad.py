"""GA054 bad: a regressor with a (N, 1) output trained on (N,) targets: MSELoss broadcasts them to (N, N)."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "label"


class Regressor(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(8, 32), nn.ReLU(), nn.Dense(32, 16), nn.ReLU()])
        self.out = nn.Dense(16, 1)

    def construct(self, x):
        return self.out(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Regressor()
    x = Tensor(rng.standard_normal((16, 8)).astype(np.float32))
    prices = rng.standard_normal(16).astype(np.float32)  # one target per row, without the unit axis
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(prices),
        "loss_fn": nn.MSELoss(),
    }

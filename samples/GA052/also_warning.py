"""GA052 warning: a sigmoid output regressed with MSELoss onto mean ratings from 1 to 5.

The sigmoid can only produce values in [0, 1], so the loss can never reach its minimum and the
activation saturates trying. Training still runs and the loss still falls a little, and the
target may simply need scaling: a warning, not the error of an impossible class index.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "label"


class Rater(nn.Cell):
    """A 2-layer MLP predicting one rating, squashed by a sigmoid."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 32), nn.ReLU(), nn.Dense(32, 1)])
        self.out = nn.Sigmoid()

    def construct(self, x):
        return self.out(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Rater()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = Tensor(rng.uniform(1, 5, (16, 1)).astype(np.float32))  # mean star ratings, 1..5
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.MSELoss(),
    }

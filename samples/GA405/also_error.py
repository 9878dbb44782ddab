"""GA405 error: disease grades 0-4 given as the target of BCEWithLogitsLoss on a one-unit head.

A binary cross-entropy takes probabilities in [0, 1]; class indices of 2 and more make the
loss unbounded below (the optimizer drives the logit to +inf for every row of grade >= 2).
Training cannot be right: an error.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "BCEWithLogitsLoss"


class Grader(nn.Cell):
    """A 2-layer MLP over 20 features, one output unit."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 32), nn.ReLU()])
        self.head = nn.Dense(32, 1)

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Grader()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 5, (16, 1)).astype(np.float32))  # grades 0..4
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.BCEWithLogitsLoss(),
    }

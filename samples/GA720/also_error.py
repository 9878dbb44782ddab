"""GA720 error: an MLP with BatchNorm1d audited (and trained) with a batch of one row.

BatchNorm1d over (1, 32) features sees one value per channel: in training its batch variance
is 0 and it outputs its bias for every input, so no gradient reaches the layers below. Unlike
a BatchNorm2d over an image (which still averages over H x W, a warning), this step trains on
nothing: an error.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "body.1"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(16, 32), nn.BatchNorm1d(32), nn.ReLU()])
        self.head = nn.Dense(32, 4)

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Net()
    net.set_train(True)
    x = Tensor(rng.standard_normal((1, 16)).astype(np.float32))
    y = Tensor(rng.integers(0, 4, 1).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

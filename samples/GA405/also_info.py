"""GA405 info: 4 one-hot rows over 5 classes trained with a binary cross-entropy.

Every label row is one-hot, which says the classes are mutually exclusive (a softmax
cross-entropy's job), but 4 rows are too few to tell a single-label task from a multi-label one
whose batch happened to hold one label per row: info, not a warning.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "BCEWithLogitsLoss"


class Classifier(nn.Cell):
    """A 2-layer MLP over 20 features, 5 outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 32), nn.ReLU()])
        self.head = nn.Dense(32, 5)

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier()
    x = Tensor(rng.standard_normal((4, 20)).astype(np.float32))
    y = np.eye(5, dtype=np.float32)[[0, 3, 1, 4]]
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(y),
        "loss_fn": nn.BCEWithLogitsLoss(),
    }

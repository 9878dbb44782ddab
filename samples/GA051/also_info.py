"""GA051 info: a fraud detector's batch of 16 transactions, all labelled 0 (not fraud).

Every label is the same class, but there are only two classes and fraud is rare: an honest,
imbalanced binary problem gives such batches often (2^-15 with balanced classes, far above
the 10^-7 warning threshold). Worth knowing, not a warning: info.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "label"


class Detector(nn.Cell):
    """A 2-layer MLP over 20 transaction features, two classes."""

    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 32), nn.ReLU()])
        self.head = nn.Dense(32, 2)

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Detector()
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = Tensor(np.zeros(16, np.int32))  # no fraud in this batch
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

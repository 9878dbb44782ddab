"""GA053 bad: the head has 1 output (a default left as it was), the dataset has 5 one-hot classes.

The element-wise loss broadcasts the one output against the 5 columns: training runs and
learns one number for every class. (A loss that refuses the mismatch, such as
``CrossEntropyLoss`` on a 10-wide output, raises instead: GA060 reports it.)
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "label"


class Classifier(nn.Cell):
    """A 3-layer MLP over 20 features."""

    def __init__(self, classes: int = 10) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Dense(64, 32), nn.ReLU()])
        self.head = nn.Dense(32, classes)

    def construct(self, x):
        return self.head(self.body(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier(classes=1)
    x = Tensor(rng.standard_normal((16, 20)).astype(np.float32))
    y = np.eye(5, dtype=np.float32)[rng.integers(0, 5, 16)]
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(y),
        "loss_fn": nn.MSELoss(),
    }

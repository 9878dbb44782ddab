"""GA311 info: a 10-class head behind an 8-unit hidden layer.

The 10 logits are affine functions of 8 numbers, so they cannot vary freely; but the
bottleneck is only slightly narrower than the number of classes (not 8 times narrower), so the
head can still separate most of them: info.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "head.2"


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell([nn.Dense(64, 64), nn.ReLU()])
        self.head = nn.SequentialCell([nn.Dense(64, 8), nn.ReLU(), nn.Dense(8, 10)])

    def construct(self, x):
        return self.head(self.features(x))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = Classifier()
    x = Tensor(rng.standard_normal((8, 64)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 8).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

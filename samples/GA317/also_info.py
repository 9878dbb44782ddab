"""GA317 info: a sigmoid applied to a ReLU's output, which squeezes every hidden value into [0.5, 1).

Unlike a ReLU after a ReLU (the identity: a warning), the second activation changes the values,
and a designer may mean it; it is most often a leftover: info.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "2"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell([nn.Dense(20, 64), nn.ReLU(), nn.Sigmoid(), nn.Dense(64, 10)])
    x = Tensor(rng.standard_normal((8, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 8).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

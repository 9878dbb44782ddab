"""GA907 error: SGD at 100 on a small classifier: the loss grows 1e8-fold within five probe steps, still finite.

Measured divergence on the user's own batch at the user's own rate is an error, not a risk:
GA907 confirms GA721's rate (far above SGD's range) and the finding becomes an error.
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

SUBJECT = "SGD"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    y = Tensor(rng.integers(0, 4, 16).astype(np.int32))
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 64), nn.ReLU(), nn.Dense(64, 64), nn.ReLU(), nn.Dense(64, 4)])
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), learning_rate=100.0),
        "loss_fn": nn.CrossEntropyLoss(),
        "inputs": x,
        "label": y,
        "probe": 5,
    }

"""GA060 bad: one-hot rows given to a sparse cross-entropy, which takes class indices: it raises."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "label"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3)])
    x = Tensor(rng.standard_normal((8, 4)).astype(np.float32))
    one_hot = np.eye(3, dtype=np.float32)[rng.integers(0, 3, 8)]
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(one_hot),
        "loss_fn": nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
    }

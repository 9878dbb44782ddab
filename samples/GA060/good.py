"""GA060 good: the class indices the sparse cross-entropy takes."""

import numpy as np
from mindspore import Tensor, nn


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell([nn.Dense(4, 16), nn.ReLU(), nn.Dense(16, 3)])
    x = Tensor(rng.standard_normal((8, 4)).astype(np.float32))
    classes = rng.integers(0, 3, 8).astype(np.int32)
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": Tensor(classes),
        "loss_fn": nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
    }

"""GA317 bad: a Keras-style port: Dense(activation="relu") followed by an explicit nn.ReLU()."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "1"


def build() -> dict:
    rng = np.random.default_rng(0)
    net = nn.SequentialCell([nn.Dense(20, 64, activation="relu"), nn.ReLU(), nn.Dense(64, 10)])  # <- SARIF
    x = Tensor(rng.standard_normal((8, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 8).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

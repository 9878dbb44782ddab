"""GA710 bad: SoftmaxCrossEntropyWithLogits keeps its default reduction="none": the step differentiates the sum."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "SoftmaxCrossEntropyWithLogits"


def build() -> dict:
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])
    x = Tensor(np.random.default_rng(0).standard_normal((8, 16)).astype(np.float32))
    y = Tensor((np.arange(8) % 4).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": x,
        "label": y,
        "loss_fn": nn.SoftmaxCrossEntropyWithLogits(sparse=True),  # <- SARIF
    }

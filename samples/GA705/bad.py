"""GA705 bad: FixedLossScaleManager(1024, drop_overflow_update=False) in a Model, optimizer without loss_scale: updates 1024x too large."""

import numpy as np
from mindspore import Tensor, nn
from mindspore.amp import FixedLossScaleManager
from mindspore.train import Model

SUBJECT = "(root)"


def build() -> dict:
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])  # <- SARIF
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    manager = FixedLossScaleManager(1024.0, drop_overflow_update=False)
    model = Model(net, nn.CrossEntropyLoss(), optimizer, loss_scale_manager=manager)
    x = Tensor(np.ones((4, 16), np.float32))
    return {"net": model, "inputs": (x, Tensor(np.array([0, 1, 2, 3], np.int32)))}

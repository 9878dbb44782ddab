"""GA705 good: the same Model, the optimizer built with the manager's loss_scale, which it divides back."""

import numpy as np
from mindspore import Tensor, nn
from mindspore.amp import FixedLossScaleManager
from mindspore.train import Model


def build() -> dict:
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9, loss_scale=1024.0)
    manager = FixedLossScaleManager(1024.0, drop_overflow_update=False)
    model = Model(net, nn.CrossEntropyLoss(), optimizer, loss_scale_manager=manager)
    x = Tensor(np.ones((4, 16), np.float32))
    return {"net": model, "inputs": (x, Tensor(np.array([0, 1, 2, 3], np.int32)))}

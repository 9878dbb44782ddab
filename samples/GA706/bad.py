"""GA706 bad: TrainOneStepWithLossScaleCell unscales the gradients, and the optimizer's loss_scale=1024 divides them again."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


def build() -> dict:
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)])  # <- SARIF
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9, loss_scale=1024.0)
    scale = nn.DynamicLossScaleUpdateCell(loss_scale_value=1024.0, scale_factor=2, scale_window=1000)
    step = nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, scale_sense=scale
    )
    x = Tensor(np.ones((4, 16), np.float32))
    return {"net": step, "inputs": (x, Tensor(np.array([0, 1, 2, 3], np.int32)))}

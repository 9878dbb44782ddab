"""GA913 info: a float16 network whose dynamic loss scale starts too high: the first probe steps overflow, then it settles.

DynamicLossScaleUpdateCell halves the scale at each overflow; from 2**20 (with a factor of 4)
it takes a few skipped steps to reach a scale float16 gradients fit in, and every step after
updates normally. Only the first steps are wasted: info (a scale that never settles is the
warning).
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    y = Tensor((np.arange(16) % 4).astype(np.int32))
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)]).to_float(ms.float16)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    scale = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0**20, scale_factor=4, scale_window=1000)
    step = nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, scale_sense=scale
    )
    return {"net": step, "inputs": (x, y), "probe": 5}

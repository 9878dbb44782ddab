"""GA913 good: the network in float16 (O2: the loss in float32) with a dynamic loss scale starting at 2**10: no step overflows."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, amp, nn


def build() -> dict:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    y = Tensor((np.arange(16) % 4).astype(np.int32))
    ms.set_seed(0)
    net = amp.auto_mixed_precision(nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)]), "O2")
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    scale = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0**10, scale_factor=2, scale_window=1000)
    step = nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, scale_sense=scale
    )
    return {"net": step, "inputs": (x, y), "probe": 5}

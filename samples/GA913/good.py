"""GA913 good: the same float16 network with a dynamic loss scale starting at 2**10: no step overflows."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn


def build() -> dict:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    y = Tensor((np.arange(16) % 4).astype(np.int32))
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)]).to_float(ms.float16)
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    scale = nn.DynamicLossScaleUpdateCell(loss_scale_value=2.0**10, scale_factor=2, scale_window=1000)
    step = nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, scale_sense=scale
    )
    return {"net": step, "inputs": (x, y), "probe": 5}

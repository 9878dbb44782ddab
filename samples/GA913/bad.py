"""GA913 bad: a float16 network with a fixed loss scale of 2**24: every step overflows and is skipped."""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((16, 16)).astype(np.float32))
    y = Tensor((np.arange(16) % 4).astype(np.int32))
    ms.set_seed(0)
    net = nn.SequentialCell([nn.Dense(16, 32), nn.ReLU(), nn.Dense(32, 4)]).to_float(ms.float16)  # <- SARIF
    optimizer = nn.Momentum(net.trainable_params(), 0.1, 0.9)
    scale = nn.FixedLossScaleUpdateCell(loss_scale_value=2.0**24)
    step = nn.TrainOneStepWithLossScaleCell(
        nn.WithLossCell(net, nn.CrossEntropyLoss()), optimizer, scale_sense=scale
    )
    return {"net": step, "inputs": (x, y), "probe": 5}

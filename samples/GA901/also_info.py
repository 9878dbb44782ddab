"""GA901 info: a per-step learning-rate list that starts at 0 (a warm-up from zero): the probe's step changes nothing.

The first step of this recipe updates nothing by design: the schedule gives 0 at step 0 and
0.01 from step 1 on. A one-step probe therefore cannot show whether the parameters train,
but nothing is wrong with the training: info, once for the whole network.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


def build() -> dict:
    x = Tensor(np.random.default_rng(0).random((4, 4), dtype=np.float32))
    y = Tensor(np.array([0, 1, 2, 0], np.int32))
    net = nn.SequentialCell([nn.Dense(4, 8, has_bias=False), nn.BatchNorm1d(8), nn.ReLU(), nn.Dense(8, 3)])
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=[0.0] + [0.01] * 30, momentum=0.9)
    return {
        "net": net,
        "optimizer": optimizer,
        "loss_fn": nn.CrossEntropyLoss(),
        "inputs": x,
        "label": y,
        "probe": True,
    }

"""GA723 info: SGD at 2e-4 with batches of 256, 1/500 of the linear scaling rule's 0.1.

A rate far below the rule makes training slow rather than wrong (it may be meant, for
fine-tuning): a rate far above it diverges, which is the warning. Here: info.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "SGD"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((2048, 8)).astype(np.float32)
    y = (np.arange(2048) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(256, drop_remainder=True)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    optimizer = nn.SGD(net.trainable_params(), learning_rate=2e-4, momentum=0.9)
    return {"net": net, "optimizer": optimizer, "dataset": train}

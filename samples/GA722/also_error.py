"""GA722 error: 100 rows in batches of 128 with drop_remainder=True: the pipeline yields no batch at all.

The only batch would be short, and drop_remainder=True drops it: every epoch makes no training
step and the network is never updated. Training cannot happen: an error.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train/batch#1"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 8)).astype(np.float32)
    y = (np.arange(100) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(128, drop_remainder=True)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3), "dataset": train}

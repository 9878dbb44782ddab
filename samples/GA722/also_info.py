"""GA722 info: 10,000 rows in batches of one sample: 10,000 single-sample updates per epoch.

A tutorial's batch_size=1. Small batches train well (2 to 32 are often best), so this is not a
mistake for certain; but every step follows one sample's gradient, an epoch is slow, and a
BatchNorm could not compute batch statistics. Likely, not certain: info.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train/batch#1"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((10000, 8)).astype(np.float32)
    y = (np.arange(10000) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(1)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3), "dataset": train}

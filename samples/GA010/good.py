"""GA010 good: a small network for the 256 rows it trains on (under one parameter per row)."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((256, 16)).astype(np.float32)
    y = (np.arange(256) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(32)
    net = nn.SequentialCell([nn.Dense(16, 8), nn.ReLU(), nn.Dense(8, 2)])
    return {"net": net, "optimizer": nn.Adam(net.trainable_params()), "dataset": train}

"""GA015 bad: 33 rows in batches of 16 with drop_remainder=False, and a BatchNorm1d in the network."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train/batch#1"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 8)).astype(np.float32)
    y = (np.arange(33) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(16, drop_remainder=False)  # <- SARIF
    net = nn.SequentialCell([nn.Dense(8, 16), nn.BatchNorm1d(16), nn.ReLU(), nn.Dense(16, 2)])
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

"""GA722 bad: 512 rows in one batch of 512: one training step per epoch (full-batch training)."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train/batch#1"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 8)).astype(np.float32)
    y = (np.arange(512) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(512)  # <- SARIF
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3), "dataset": train}

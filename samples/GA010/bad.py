"""GA010 bad: a 1.06M-parameter network trained on 8 rows: 132,000 parameters per row."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 256)).astype(np.float32)
    y = (np.arange(8) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(4)  # <- SARIF
    net = nn.SequentialCell([nn.Dense(256, 4096), nn.ReLU(), nn.Dense(4096, 2)])
    return {"net": net, "optimizer": nn.Adam(net.trainable_params()), "dataset": train}

"""GA002 bad: 400 rows stored by class and read in order, shuffled through a buffer of 8 rows."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train/shuffle#1"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 4)).astype(np.float32)
    y = np.repeat(np.arange(4), 100).astype(np.int32)  # sorted by class, as stored
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=False).shuffle(8).batch(16)  # <- SARIF
    net = nn.Dense(4, 4)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

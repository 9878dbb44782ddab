"""GA002 good: the same rows, shuffled through a buffer as large as the dataset."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((400, 4)).astype(np.float32)
    y = np.repeat(np.arange(4), 100).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=False).shuffle(400).batch(16)
    net = nn.Dense(4, 4)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

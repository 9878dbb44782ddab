"""GA001 warning: a NumpySlicesDataset read with shuffle=False, whose rows were stored in no class order.

No step shuffles the rows, so every epoch feeds the same sequence of batches; but the sampled
batches each mix both classes (the rows alternate), so the damage of class-sorted data is not
shown: the rows may have been stored in a random order. A warning, not an error.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train/NumpySlicesDataset#1"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((32, 8)).astype(np.float32)
    y = (np.arange(32) % 2).astype(np.int32)  # classes interleaved: each batch holds both
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=False).batch(8)
    net = nn.Dense(8, 2)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

"""GA009 bad: 50 labelled rows per class, far below the guide's 5,000."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train:label"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((100, 2)).astype(np.float32)
    y = (np.arange(100) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(10)  # <- SARIF
    net = nn.Dense(2, 2)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

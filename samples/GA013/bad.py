"""GA013 bad: an "age" column where -999 marks an unknown age, 1,000 robust deviations from the rest."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train:age"


def build() -> dict:
    rng = np.random.default_rng(0)
    age = rng.normal(40, 12, 64).round(1).astype(np.float32)
    age[17] = -999.0
    y = (np.arange(64) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"age": (age - 40) / 12, "label": y}).batch(16)  # <- SARIF
    net = nn.Dense(1, 2)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

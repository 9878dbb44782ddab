"""GA008 info: a Python generator yielding one positive row in twenty, counted on a sample.

A GeneratorDataset cannot be re-read cheaply, so its labels are counted on the sampled batches
only (8 batches of 10 rows: 76 of class 0 and 4 of class 1). The ratio is over 10, but a few
batches cannot measure a rare class well: the imbalance is an estimate, hence info.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train:label"


def rows():
    rng = np.random.default_rng(0)
    for i in range(400):
        yield rng.standard_normal(2).astype(np.float32), np.int32(0 if i % 20 else 1)


def build() -> dict:
    train = ds.GeneratorDataset(rows, ["x", "label"], shuffle=False).batch(10)
    net = nn.Dense(2, 2)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train, "dataset_batches": 8}

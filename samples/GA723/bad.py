"""GA723 bad: SGD with Nesterov at 0.1, the rate of a batch-256 recipe, with batches of 2."""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "SGD"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((512, 8)).astype(np.float32)
    y = (np.arange(512) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}, shuffle=True).batch(2, drop_remainder=True)
    net = nn.SequentialCell([nn.Dense(8, 16), nn.ReLU(), nn.Dense(16, 2)])
    optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1, momentum=0.9, nesterov=True)  # <- SARIF
    return {"net": net, "optimizer": optimizer, "dataset": train}

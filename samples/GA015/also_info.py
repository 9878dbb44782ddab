"""GA015 info: 33 images in batches of 16 with drop_remainder=False, into a CNN with a BatchNorm2d.

The last batch of every epoch holds one image. Its BatchNorm2d still sees 8x8 values per channel,
so its statistics are not degenerate (as a BatchNorm1d over one row would be, an error): that
step only gets noisy statistics, hence info.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train/batch#1"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((33, 3, 8, 8)).astype(np.float32)
    y = (np.arange(33) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(16, drop_remainder=False)
    net = nn.SequentialCell(
        [nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.ReLU(), nn.Flatten(), nn.Dense(256, 2)]
    )
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

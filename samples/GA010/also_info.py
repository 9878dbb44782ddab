"""GA010 info: a 33,000-parameter MLP fine-tuned on 16 rows: about 2,000 parameters per row.

Over 1,000 trainable parameters per training row the network can memorise the set; but such
ratios are routine when fine-tuning a pretrained model, so below 100,000 per row it is info.
"""

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train"


def build() -> dict:
    rng = np.random.default_rng(0)
    x = rng.standard_normal((16, 256)).astype(np.float32)
    y = (np.arange(16) % 2).astype(np.int32)
    train = ds.NumpySlicesDataset({"x": x, "label": y}).batch(4)
    net = nn.SequentialCell([nn.Dense(256, 128), nn.ReLU(), nn.Dense(128, 2)])
    return {"net": net, "optimizer": nn.Adam(net.trainable_params()), "dataset": train}

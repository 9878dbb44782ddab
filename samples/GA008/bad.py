"""GA008 bad: a CSV file with 200 rows of class 0 and 10 of class 1 (counted over the whole file)."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train:label"


def csv_file() -> str:
    folder = tempfile.mkdtemp(prefix="graphaudit-GA008-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "train.csv")
    rng = np.random.default_rng(0)
    labels = [0] * 200 + [1] * 10
    with open(path, "w") as out:
        for label in labels:
            a, b = rng.standard_normal(2)
            out.write(f"{a:.4f},{b:.4f},{label}\n")
    return path


def build() -> dict:
    train = ds.CSVDataset(csv_file(), column_defaults=[0.0, 0.0, 0], column_names=["a", "b", "label"]).batch(  # <- SARIF
        16
    )
    net = nn.Dense(2, 2)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

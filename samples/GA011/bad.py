"""GA011 bad: a CSV export that wrote "nan" and "inf" for missing and overflowed values."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import numpy as np
from mindspore import nn

SUBJECT = "train:income"


def csv_file(broken: bool) -> str:
    folder = tempfile.mkdtemp(prefix="graphaudit-GA011-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "train.csv")
    rng = np.random.default_rng(0)
    with open(path, "w") as out:
        for i in range(64):
            age, income = rng.normal(0, 1), rng.normal(0, 1)
            text = "nan" if broken and i % 9 == 4 else "inf" if broken and i == 30 else f"{income:.4f}"
            out.write(f"{age:.4f},{text},{i % 2}\n")
    return path


def build() -> dict:
    columns = ["age", "income", "label"]
    train = ds.CSVDataset(csv_file(broken=True), column_defaults=[0.0, 0.0, 0], column_names=columns).batch(  # <- SARIF
        16
    )
    net = nn.Dense(2, 2)
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

"""GA007 bad: a MindRecord whose labels are one-hot encoded in the pipeline, trained with sparse=True."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.transforms as transforms
import numpy as np
from mindspore import nn
from mindspore.mindrecord import FileWriter

SUBJECT = "train:label"


def mindrecord(rows: int) -> str:
    folder = tempfile.mkdtemp(prefix="graphaudit-GA007-")
    atexit.register(shutil.rmtree, folder, True)
    path = os.path.join(folder, "train.mindrecord")
    writer = FileWriter(path, shard_num=1, overwrite=True)
    writer.add_schema({"features": {"type": "float32", "shape": [6]}, "label": {"type": "int32"}}, "train")
    rng = np.random.default_rng(0)
    writer.write_raw_data(
        [{"features": rng.standard_normal(6).astype(np.float32), "label": i % 3} for i in range(rows)]
    )
    writer.commit()
    return path


def build() -> dict:
    train = ds.MindDataset(mindrecord(48)).map(transforms.OneHot(3), "label").batch(8)  # <- SARIF
    net = nn.Dense(6, 3)
    loss = nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean")
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "loss_fn": loss, "dataset": train}

"""GA001 bad: an ImageFolderDataset read with shuffle=False: its rows come class folder by class folder."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import nn
from PIL import Image

SUBJECT = "train/ImageFolderDataset#1"


def image_folder(classes: int, per_class: int) -> str:
    """PNG images in one folder per class, in a temporary folder removed at exit."""
    root = tempfile.mkdtemp(prefix="graphaudit-GA001-")
    atexit.register(shutil.rmtree, root, True)
    rng = np.random.default_rng(0)
    for c in range(classes):
        os.makedirs(os.path.join(root, f"class{c}"))
        for i in range(per_class):
            pixels = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c}", f"{i}.png"))
    return root


def build() -> dict:
    prepare = [
        vision.Decode(),
        vision.Rescale(1 / 255, 0),
        vision.Normalize([0.5] * 3, [0.29] * 3),
        vision.HWC2CHW(),
    ]
    train = ds.ImageFolderDataset(image_folder(2, 16), shuffle=False).map(prepare, "image").batch(8)  # <- SARIF
    net = nn.SequentialCell([nn.Flatten(), nn.Dense(192, 2)])
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

"""GA014 bad: the same PNG copied into the "cat" and the "dog" folder of an ImageFolderDataset."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import nn
from PIL import Image

SUBJECT = "train:label"


def image_folder(copy_across: bool) -> str:
    root = tempfile.mkdtemp(prefix="graphaudit-GA014-")
    atexit.register(shutil.rmtree, root, True)
    rng = np.random.default_rng(0)
    for name in ("cat", "dog"):
        os.makedirs(os.path.join(root, name))
        for i in range(6):
            pixels = rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, name, f"{i}.png"))
    if copy_across:
        shutil.copy(os.path.join(root, "cat", "3.png"), os.path.join(root, "dog", "3_copy.png"))
    return root


def build() -> dict:
    prepare = [
        vision.Decode(),
        vision.Rescale(1 / 255, 0),
        vision.Normalize([0.5] * 3, [0.29] * 3),
        vision.HWC2CHW(),
    ]
    train = ds.ImageFolderDataset(image_folder(copy_across=True)).map(prepare, "image").batch(4)  # <- SARIF
    net = nn.SequentialCell([nn.Flatten(), nn.Dense(192, 2)])
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "dataset": train}

"""GA006 bad: five class folders (labels 0..4), a head built for four classes (its traced output is [2, 4])."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import Tensor, nn
from PIL import Image

SUBJECT = "train:label"


def image_folder(classes: int) -> str:
    root = tempfile.mkdtemp(prefix="graphaudit-GA006-")
    atexit.register(shutil.rmtree, root, True)
    rng = np.random.default_rng(0)
    for c in range(classes):
        os.makedirs(os.path.join(root, f"class{c}"))
        for i in range(4):
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
    train = ds.ImageFolderDataset(image_folder(5)).map(prepare, "image").batch(4)  # <- SARIF
    net = nn.SequentialCell([nn.Flatten(), nn.Dense(192, 4)])
    x = Tensor(np.zeros((2, 3, 8, 8), np.float32))
    return {"net": net, "optimizer": nn.SGD(net.trainable_params()), "inputs": (x,), "dataset": train}

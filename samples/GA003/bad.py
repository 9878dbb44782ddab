"""GA003 bad: JPEG images decoded and resized, but never rescaled: uint8 0-255 reaches the network."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import nn
from PIL import Image

SUBJECT = "train:image"


def image_folder() -> str:
    root = tempfile.mkdtemp(prefix="graphaudit-GA003-")
    atexit.register(shutil.rmtree, root, True)
    rng = np.random.default_rng(0)
    for c in range(2):
        os.makedirs(os.path.join(root, f"class{c}"))
        for i in range(12):
            pixels = rng.integers(0, 256, (12, 12, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c}", f"{i}.jpg"), quality=90)
    return root


def build() -> dict:
    prepare = [vision.Decode(), vision.Resize((8, 8)), vision.HWC2CHW()]
    train = ds.ImageFolderDataset(image_folder()).map(prepare, "image").batch(8)  # <- SARIF
    net = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Dense(256, 2)])
    return {"net": net, "optimizer": nn.Adam(net.trainable_params()), "dataset": train}

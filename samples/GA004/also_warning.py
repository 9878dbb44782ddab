"""GA004 warning: training resizes to 20 before its 16x16 centre crop, evaluation to 18.

Both pipelines prepare their images deterministically and hand the network 16x16 images with
the same scaling, so nothing breaks outright; but the crop is taken from a differently resized
image, so objects appear at another scale in evaluation than in training. That is a warning:
the data is still of the same kind, only its scale shifted.
"""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import nn
from PIL import Image

SUBJECT = "eval:image"
MEAN, STD = [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]


def image_folder(seed: int) -> str:
    root = tempfile.mkdtemp(prefix="graphaudit-GA004-")
    atexit.register(shutil.rmtree, root, True)
    rng = np.random.default_rng(seed)
    for c in range(2):
        os.makedirs(os.path.join(root, f"class{c}"))
        for i in range(8):
            pixels = rng.integers(0, 256, (24, 24, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c}", f"{i}.png"))
    return root


def build() -> dict:
    finish = [vision.Rescale(1 / 255, 0), vision.Normalize(MEAN, STD), vision.HWC2CHW()]
    train_ops = [vision.Decode(), vision.Resize(20), vision.CenterCrop(16), vision.RandomHorizontalFlip()]
    train = ds.ImageFolderDataset(image_folder(0)).map(train_ops + finish, "image").batch(4)
    eval_ops = [vision.Decode(), vision.Resize(18), vision.CenterCrop(16)]
    eval_ds = ds.ImageFolderDataset(image_folder(1), shuffle=False).map(eval_ops + finish, "image").batch(4)
    net = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Dense(1024, 2)])
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "dataset": train,
        "eval_dataset": eval_ds,
    }

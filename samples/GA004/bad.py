"""GA004 bad: the evaluation pipeline normalises with ImageNet's mean and std, training with its own."""

import atexit
import os
import shutil
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import nn
from PIL import Image

SUBJECT = "eval/map#1/Normalize"
MEAN, STD = [0.5, 0.5, 0.5], [0.25, 0.25, 0.25]


def image_folder(seed: int) -> str:
    root = tempfile.mkdtemp(prefix="graphaudit-GA004-")
    atexit.register(shutil.rmtree, root, True)
    rng = np.random.default_rng(seed)
    for c in range(2):
        os.makedirs(os.path.join(root, f"class{c}"))
        for i in range(8):
            pixels = rng.integers(0, 256, (20, 20, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, f"class{c}", f"{i}.png"))
    return root


def build() -> dict:
    augment = [vision.Decode(), vision.RandomResizedCrop(16), vision.RandomHorizontalFlip()]
    finish = [vision.Rescale(1 / 255, 0), vision.Normalize(MEAN, STD), vision.HWC2CHW()]
    train = ds.ImageFolderDataset(image_folder(0)).map(augment + finish, "image").batch(4)
    evaluate = [
        vision.Decode(),
        vision.Resize(18),
        vision.CenterCrop(16),
        vision.Rescale(1 / 255, 0),
        vision.Normalize([0.485, 0.456, 0.406], [0.229, 0.224, 0.225]),
        vision.HWC2CHW(),
    ]
    eval_ds = ds.ImageFolderDataset(image_folder(1), shuffle=False).map(evaluate, "image").batch(4)  # <- SARIF
    net = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.ReLU(), nn.Flatten(), nn.Dense(1024, 2)])
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "dataset": train,
        "eval_dataset": eval_ds,
    }

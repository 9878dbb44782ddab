"""Train and evaluate a small CNN on image folders with two hand-written pipelines.

The bug: the evaluation pipeline forgets Rescale and Normalize, so the network is evaluated
on raw 0-255 pixels while it trained on normalised ones; accuracy collapses silently.
(The images are generated into temporary folders so that the script runs anywhere.)
"""

import os
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import nn
from PIL import Image

import graphaudit

CLASSES = ["bolt", "nut", "screw"]
MEAN, STD = [0.485, 0.456, 0.406], [0.229, 0.224, 0.225]


def make_image_folder(root: str, seed: int, per_class: int = 8, size: int = 40) -> None:
    rng = np.random.default_rng(seed)
    for name in CLASSES:
        os.makedirs(os.path.join(root, name))
        for i in range(per_class):
            pixels = rng.integers(0, 256, (size, size, 3), dtype=np.uint8)
            Image.fromarray(pixels).save(os.path.join(root, name, f"{i:03d}.png"))


class SmallCNN(nn.Cell):
    def __init__(self, num_classes: int) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [
                nn.Conv2d(3, 16, 3, pad_mode="same"),
                nn.BatchNorm2d(16),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
                nn.Conv2d(16, 32, 3, pad_mode="same"),
                nn.BatchNorm2d(32),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
            ]
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(32, num_classes)

    def construct(self, x):
        return self.fc(self.flatten(self.pool(self.features(x))))


with tempfile.TemporaryDirectory(prefix="newcomer-12-") as root:
    train_dir, val_dir = os.path.join(root, "train"), os.path.join(root, "val")
    make_image_folder(train_dir, seed=0)
    make_image_folder(val_dir, seed=1)

    train_tf = [
        vision.Decode(),
        vision.RandomResizedCrop(32),
        vision.RandomHorizontalFlip(),
        vision.Rescale(1 / 255, 0),
        vision.Normalize(MEAN, STD),
        vision.HWC2CHW(),
    ]
    eval_tf = [
        vision.Decode(),
        vision.Resize(36),
        vision.CenterCrop(32),
        vision.HWC2CHW(),
    ]  # bug: no Rescale/Normalize
    train_ds = (
        ds.ImageFolderDataset(train_dir, shuffle=True).map(train_tf, "image").batch(8, drop_remainder=True)
    )
    eval_ds = ds.ImageFolderDataset(val_dir, shuffle=False).map(eval_tf, "image").batch(8)

    net = SmallCNN(len(CLASSES))
    net.set_train(True)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)

    report = graphaudit.audit(
        net, optimizer, loss_fn=nn.CrossEntropyLoss(), dataset=train_ds, eval_dataset=eval_ds
    )
    print(report)

"""Train a small CNN from an image folder read with ``shuffle=False``.

The bug: ImageFolderDataset(shuffle=False) yields the images class folder by class folder,
so every batch holds a single class and the network learns whichever class came last.
(The images are generated into a temporary folder so that the script runs anywhere.)
"""

import os
import tempfile

import mindspore.dataset as ds
import mindspore.dataset.vision as vision
import numpy as np
from mindspore import nn
from PIL import Image

import graphaudit

CLASSES = ["cat", "dog", "fox", "owl"]


def make_image_folder(root: str, per_class: int = 12, size: int = 40) -> None:
    rng = np.random.default_rng(0)
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


with tempfile.TemporaryDirectory(prefix="newcomer-11-") as root:
    make_image_folder(root)
    transforms = [
        vision.Decode(),
        vision.RandomResizedCrop(32),
        vision.RandomHorizontalFlip(),
        vision.Rescale(1 / 255, 0),
        vision.Normalize([0.5, 0.5, 0.5], [0.25, 0.25, 0.25]),
        vision.HWC2CHW(),
    ]
    train_ds = ds.ImageFolderDataset(root, shuffle=False)  # bug: shuffle=True was meant
    train_ds = train_ds.map(transforms, "image").batch(8, drop_remainder=True)

    net = SmallCNN(len(CLASSES))
    net.set_train(True)
    optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)

    report = graphaudit.audit(net, optimizer, loss_fn=nn.CrossEntropyLoss(), dataset=train_ds)
    print(report)

"""GA604 info: an ImageNet classifier's checkpoint without its head, loaded into a 10-class model whose head is declared new.

Fine-tuning on a new task: the checkpoint holds backbone.* only (the old 1000-class head was
dropped) and new_parameters=["head.*"] says the new head starts from its initialisation on
purpose. Nothing to fix, but worth listing what does not load: info.
"""

import os
import tempfile

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

FOLDER = tempfile.TemporaryDirectory(prefix="graphaudit-sample-")  # removed when the sample is unloaded


class Backbone(nn.Cell):
    def __init__(self, width: int = 8) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, width, 3)
        self.bn = nn.BatchNorm2d(width)
        self.pool = nn.AdaptiveAvgPool2d(1)

    def construct(self, x):
        return self.pool(self.bn(self.conv(x))).reshape(x.shape[0], -1)


class Classifier(nn.Cell):
    def __init__(self, width: int = 8, classes: int = 10) -> None:
        super().__init__()
        self.backbone = Backbone(width)
        self.head = nn.Dense(width, classes)

    def construct(self, x):
        return self.head(self.backbone(x))


def saved(cell: nn.Cell, name: str) -> str:
    path = os.path.join(FOLDER.name, name)
    ms.save_checkpoint(cell, path)
    return path


def image() -> Tensor:
    return Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))


SUBJECT = "head"


def build() -> dict:
    path = os.path.join(FOLDER.name, "pretrained.ckpt")
    ms.save_checkpoint(Classifier(classes=1000), path, choice_func=lambda name: not name.startswith("head."))
    return {"net": Classifier(), "inputs": image(), "checkpoint": path, "new_parameters": ["head.*"]}

"""GA606 bad: a checkpoint of the same classifier at another width (16 channels instead of 8)."""

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
        self.backbone = Backbone(width)  # <- SARIF
        self.head = nn.Dense(width, classes)  # <- SARIF

    def construct(self, x):
        return self.head(self.backbone(x))


def saved(cell: nn.Cell, name: str) -> str:
    path = os.path.join(FOLDER.name, name)
    ms.save_checkpoint(cell, path)
    return path


def image() -> Tensor:
    return Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))


SUBJECT = "backbone"


def build() -> dict:
    path = saved(Classifier(width=16), "wide.ckpt")
    return {"net": Classifier(), "inputs": image(), "checkpoint": path}

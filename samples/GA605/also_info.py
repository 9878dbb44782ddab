"""GA605 info: a checkpoint of the training model, with its auxiliary head, loaded into the deployed one without it.

The entries aux.* load into no parameter: the checkpoint is of a larger model the network is
a part of, and every parameter of the network loads. That is usual (a training-only branch
dropped for inference), but it is also what a checkpoint of another model looks like: info.
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


class Training(Classifier):
    """The same classifier with an auxiliary head used only during training."""

    def __init__(self, width: int = 8, classes: int = 10) -> None:
        super().__init__(width, classes)
        self.aux = nn.Dense(width, classes)


SUBJECT = "(root)"


def build() -> dict:
    path = saved(Training(), "training.ckpt")
    return {"net": Classifier(), "inputs": image(), "checkpoint": path}

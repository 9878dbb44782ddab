"""GA050 bad: a small CNN fed raw 0-255 pixel values (the images were never rescaled)."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "inputs[0]"


class SmallCNN(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(  # <- SARIF
            [
                nn.Conv2d(3, 16, 3),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
                nn.Conv2d(16, 32, 3),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
            ]
        )
        self.flatten = nn.Flatten()
        self.head = nn.Dense(32 * 4 * 4, 10)

    def construct(self, x):
        return self.head(self.flatten(self.features(x)))


def build() -> dict:
    rng = np.random.default_rng(0)
    net = SmallCNN()
    images = rng.integers(0, 256, (8, 3, 16, 16)).astype(np.float32)  # decoded uint8 images, cast only
    labels = rng.integers(0, 10, (8,)).astype(np.int32)
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (Tensor(images),),
        "label": Tensor(labels),
        "loss_fn": nn.CrossEntropyLoss(),
    }

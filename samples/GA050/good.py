"""GA050 good: the same CNN, the images scaled to [0, 1] and standardised per channel."""

import numpy as np
from mindspore import Tensor, nn


class SmallCNN(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
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
    images = rng.integers(0, 256, (8, 3, 16, 16)).astype(np.float32) / 255.0
    mean, std = np.array([0.485, 0.456, 0.406]), np.array([0.229, 0.224, 0.225])
    images = ((images - mean[:, None, None]) / std[:, None, None]).astype(np.float32)
    labels = rng.integers(0, 10, (8,)).astype(np.int32)
    return {
        "net": net,
        "optimizer": nn.Momentum(net.trainable_params(), 0.01, 0.9),
        "inputs": (Tensor(images),),
        "label": Tensor(labels),
        "loss_fn": nn.CrossEntropyLoss(),
    }

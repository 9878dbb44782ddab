"""A VGG-style CNN whose layers are built by a helper with ``weight_init="zeros"``.

The bug: the helper was copied from a snippet that zero-initialised a final layer; with every
convolution and Dense at zero, all units of a layer compute the same thing and stay equal.
"""

import numpy as np
from mindspore import Tensor, nn

import graphaudit

INIT = "zeros"  # bug: meant "he_uniform"


def conv(in_channels: int, out_channels: int) -> nn.SequentialCell:
    return nn.SequentialCell(
        [
            nn.Conv2d(in_channels, out_channels, 3, pad_mode="same", weight_init=INIT),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        ]
    )


class SmallVGG(nn.Cell):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [
                conv(3, 16),
                conv(16, 16),
                nn.MaxPool2d(2, 2),
                conv(16, 32),
                conv(32, 32),
                nn.MaxPool2d(2, 2),
                conv(32, 64),
                conv(64, 64),
                nn.MaxPool2d(2, 2),
            ]
        )
        self.flatten = nn.Flatten()
        self.classifier = nn.SequentialCell(
            [
                nn.Dense(64 * 8 * 8, 128, weight_init=INIT),
                nn.ReLU(),
                nn.Dense(128, 64, weight_init=INIT),
                nn.ReLU(),
                nn.Dense(64, num_classes, weight_init=INIT),
            ]
        )

    def construct(self, x):
        return self.classifier(self.flatten(self.features(x)))


net = SmallVGG()
net.set_train(True)
optimizer = nn.SGD(net.trainable_params(), learning_rate=0.01, momentum=0.9)

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
y = Tensor(np.array([0, 9], np.int32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
print(report)

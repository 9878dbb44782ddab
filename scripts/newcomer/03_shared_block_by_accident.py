"""A small residual CNN whose stage is built with ``[block] * depth``.

The bug: list multiplication repeats one block object, so the three "blocks" of each stage
are one block called three times: one set of weights instead of three.
"""

import numpy as np
from mindspore import Tensor, nn

import graphaudit


class ResBlock(nn.Cell):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, pad_mode="same", has_bias=False)
        self.bn1 = nn.BatchNorm2d(channels)
        self.conv2 = nn.Conv2d(channels, channels, 3, pad_mode="same", has_bias=False)
        self.bn2 = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def construct(self, x):
        out = self.relu(self.bn1(self.conv1(x)))
        out = self.bn2(self.conv2(out))
        return self.relu(out + x)


def stage(in_channels: int, out_channels: int, depth: int) -> nn.SequentialCell:
    down = nn.SequentialCell(
        [
            nn.Conv2d(in_channels, out_channels, 3, stride=2, pad_mode="same"),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        ]
    )
    block = ResBlock(out_channels)
    return nn.SequentialCell([down] + [block] * depth)  # bug: one block object repeated


class SmallResNet(nn.Cell):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.SequentialCell([nn.Conv2d(3, 16, 3, pad_mode="same"), nn.BatchNorm2d(16), nn.ReLU()])
        self.stage1 = stage(16, 32, 3)
        self.stage2 = stage(32, 64, 3)
        self.stage3 = stage(64, 64, 3)
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.fc = nn.Dense(64, num_classes)

    def construct(self, x):
        x = self.stage3(self.stage2(self.stage1(self.stem(x))))
        return self.fc(self.flatten(self.pool(x)))


net = SmallResNet()
net.set_train(True)
optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
y = Tensor(np.array([2, 7], np.int32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
print(report)

"""A CNN whose backbone was put in inference mode to extract features, then trained.

The bug: ``net.backbone.set_train(False)`` from the feature-extraction step is still in
effect when training starts (``set_train(True)`` was called before it), so every BatchNorm of
the backbone normalises with its running statistics and never updates them.
"""

import numpy as np
from mindspore import Tensor, nn

import graphaudit


def conv_bn(in_channels: int, out_channels: int, stride: int = 1) -> nn.SequentialCell:
    return nn.SequentialCell(
        [
            nn.Conv2d(in_channels, out_channels, 3, stride=stride, pad_mode="same", has_bias=False),
            nn.BatchNorm2d(out_channels),
            nn.ReLU(),
        ]
    )


class Classifier(nn.Cell):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.backbone = nn.SequentialCell(
            [conv_bn(3, 16), conv_bn(16, 32, 2), conv_bn(32, 32), conv_bn(32, 64, 2), conv_bn(64, 64)]
        )
        self.pool = nn.AdaptiveAvgPool2d(1)
        self.flatten = nn.Flatten()
        self.head = nn.SequentialCell([nn.Dropout(p=0.2), nn.Dense(64, num_classes)])

    def construct(self, x):
        return self.head(self.flatten(self.pool(self.backbone(x))))


rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
y = Tensor(np.array([3, 8], np.int32))

net = Classifier()
net.set_train(True)

# look at the features once before training
net.backbone.set_train(False)
features = net.backbone(x)
print("feature map:", features.shape)
# bug: net.backbone.set_train(True) (or net.set_train(True) again) is missing here

optimizer = nn.Momentum(net.trainable_params(), learning_rate=0.01, momentum=0.9)
report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss(), mode="train")
print(report)

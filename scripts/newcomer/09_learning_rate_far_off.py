"""A small CNN on 32x32 images trained with SGD at a learning rate meant for a schedule's peak x 100.

The bug: ``learning_rate=10.0`` (the config said 0.1, a zero was dropped... twice); every step
moves the weights by more than their own size.  probe=5 runs five real steps to show it.
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn

import graphaudit

ms.set_seed(0)


class SmallCNN(nn.Cell):
    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.features = nn.SequentialCell(
            [
                nn.Conv2d(3, 16, 3, pad_mode="same"),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
                nn.Conv2d(16, 32, 3, pad_mode="same"),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
                nn.Conv2d(32, 64, 3, pad_mode="same"),
                nn.ReLU(),
                nn.MaxPool2d(2, 2),
            ]
        )
        self.flatten = nn.Flatten()
        self.classifier = nn.SequentialCell([nn.Dense(64 * 4 * 4, 64), nn.ReLU(), nn.Dense(64, num_classes)])

    def construct(self, x):
        return self.classifier(self.flatten(self.features(x)))


net = SmallCNN()
net.set_train(True)
optimizer = nn.SGD(net.trainable_params(), learning_rate=10.0)  # bug: meant 0.1

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((8, 3, 32, 32)).astype(np.float32))
y = Tensor((np.arange(8) % 10).astype(np.int32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss(), probe=5)
print(report)

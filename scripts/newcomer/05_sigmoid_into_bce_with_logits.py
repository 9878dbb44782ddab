"""Multi-label tagging on a ResNet-18: the model ends in a Sigmoid and the loss is BCEWithLogitsLoss.

The bug: BCEWithLogitsLoss applies the sigmoid itself, so the probabilities are squashed a
second time; the loss barely moves and the gradients are tiny.
"""

import mindcv
import numpy as np
from mindspore import Tensor, nn

import graphaudit

NUM_TAGS = 6


class Tagger(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = mindcv.create_model("resnet18", pretrained=False, num_classes=NUM_TAGS)
        self.sigmoid = nn.Sigmoid()  # "so that the outputs are probabilities"

    def construct(self, x):
        return self.sigmoid(self.backbone(x))


net = Tagger()
net.set_train(True)
optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
y = Tensor(rng.integers(0, 2, (2, NUM_TAGS)).astype(np.float32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.BCEWithLogitsLoss())
print(report)

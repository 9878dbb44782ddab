"""A ResNet-18 with an extra projection neck; the optimizer is built from a hand-made list.

The bug: the parameter list for the optimizer names the backbone and the classifier but
forgets the neck added later, so the neck's weights never train.
"""

import mindcv
import numpy as np
from mindspore import Tensor, nn

import graphaudit


class EmbeddingNet(nn.Cell):
    def __init__(self, num_classes: int = 8) -> None:
        super().__init__()
        self.backbone = mindcv.create_model("resnet18", pretrained=False, num_classes=num_classes)
        self.backbone.classifier = nn.Identity()
        self.neck = nn.SequentialCell(
            [
                nn.Dense(512, 256),
                nn.BatchNorm1d(256),
                nn.ReLU(),
                nn.Dense(256, 128),
                nn.BatchNorm1d(128),
                nn.ReLU(),
            ]
        )
        self.classifier = nn.Dense(128, num_classes)

    def construct(self, x):
        return self.classifier(self.neck(self.backbone(x)))


net = EmbeddingNet()
net.set_train(True)

# two learning rates: a smaller one for the backbone
groups = [
    {"params": net.backbone.trainable_params(), "lr": 1e-4},
    {"params": net.classifier.trainable_params(), "lr": 1e-3},
]  # bug: net.neck is missing
optimizer = nn.Adam(groups, learning_rate=1e-3)

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((2, 3, 64, 64)).astype(np.float32))
y = Tensor(np.array([1, 6], np.int32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
print(report)

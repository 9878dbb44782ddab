"""An MLP classifier ported from PyTorch: ``nn.Dropout(0.1)`` after each hidden layer.

The bug: in MindSpore the first positional argument of nn.Dropout is ``keep_prob``, not the
drop rate: ``nn.Dropout(0.1)`` keeps 10% of the activations and drops 90% in every layer.
"""

import numpy as np
from mindspore import Tensor, nn

import graphaudit


def hidden(in_features: int, out_features: int) -> nn.SequentialCell:
    return nn.SequentialCell([nn.Dense(in_features, out_features), nn.ReLU(), nn.Dropout(0.1)])  # p=0.1 meant


class TabularNet(nn.Cell):
    def __init__(self, in_features: int = 32, num_classes: int = 4) -> None:
        super().__init__()
        self.body = nn.SequentialCell(
            [hidden(in_features, 128), hidden(128, 128), hidden(128, 64), hidden(64, 64)]
        )
        self.head = nn.Dense(64, num_classes)

    def construct(self, x):
        return self.head(self.body(x))


net = TabularNet()
net.set_train(True)
optimizer = nn.AdamWeightDecay(net.trainable_params(), learning_rate=1e-3, weight_decay=1e-2)

rng = np.random.default_rng(0)
x = Tensor(rng.standard_normal((16, 32)).astype(np.float32))
y = Tensor(rng.integers(0, 4, (16,)).astype(np.int32))

report = graphaudit.audit(net, optimizer, inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
print(report)

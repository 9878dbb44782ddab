"""GA901 warning: a Dense bias right before a BatchNorm1d: one real step leaves it bit-identical.

BatchNorm subtracts the batch mean, which cancels any bias added before it: the bias's
gradient is only float rounding noise, and its update falls below the float resolution of its
value. The step did run and the rest trains; the bias is merely dead weight (build the Dense
with has_bias=False): a warning, not the error of a parameter cut off from the loss.
"""

import mindspore as ms
import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "fc.bias"


class Net(nn.Cell):
    """Dense -> BatchNorm -> ReLU -> Dense."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.head = nn.Dense(8, 3)

    def construct(self, x):
        return self.head(ops.relu(self.bn(self.fc(x))))


def build() -> dict:
    rng = np.random.default_rng(0)
    x = Tensor(rng.standard_normal((8, 4)).astype(np.float32))
    y = Tensor((np.arange(8) % 3).astype(np.int32))
    ms.set_seed(0)  # the initial weights: the bias's rounding noise stays far below its values' resolution
    net = Net()
    net.set_train(True)
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), 0.1),
        "loss_fn": nn.SoftmaxCrossEntropyWithLogits(sparse=True, reduction="mean"),
        "inputs": x,
        "label": y,
        "probe": True,
    }

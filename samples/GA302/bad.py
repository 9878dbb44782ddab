"""GA302 bad: the auxiliary head is computed and then dropped."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "aux.weight"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.aux = nn.Dense(8, 8)  # <- SARIF
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        x = self.backbone(x)
        aux = self.aux(x)  # noqa: F841 - the bug: computed, never used
        return self.head(x)


def build() -> dict:
    net = Net()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
    }

"""GA301 info: an Inception-style auxiliary classifier called only in training, audited in evaluation mode.

construct() calls ``aux`` only when self.training is True; the network was audited in eval
mode, so the branch was never run and its wiring not checked. That is how an auxiliary head is
meant to work, not a forgotten cell: info, with how to audit it too.
"""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "aux"


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.body = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU()])
        self.aux = nn.Dense(8, 2)
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        h = self.body(x)
        out = self.head(h)
        if self.training:
            out = out + 0.3 * self.aux(h)
        return out


def build() -> dict:
    net = Net()
    net.set_train(False)
    return {"net": net, "inputs": Tensor(np.ones((2, 4), np.float32)), "mode": "eval"}

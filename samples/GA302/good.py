"""GA302 good: the auxiliary head feeds the output; a fixed (non-trainable) buffer is unused."""

import numpy as np
from mindspore import Parameter, Tensor, nn


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.backbone = nn.Dense(4, 8)
        self.aux = nn.Dense(8, 8)
        self.head = nn.Dense(8, 2)
        self.buffer = Parameter(Tensor(np.zeros((2,), np.float32)), name="buffer", requires_grad=False)

    def construct(self, x):
        x = self.backbone(x)
        return self.head(x + self.aux(x))


def build() -> dict:
    net = Net()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
    }

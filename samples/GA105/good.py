"""GA105 good: with auto_prefix the two parameters are "a.w" and "b.w"."""

import numpy as np
from mindspore import Parameter, Tensor, nn


class Scale(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(np.ones((4,), np.float32)), name="w")

    def construct(self, x):
        return x * self.w


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.a = Scale()
        self.b = Scale()

    def construct(self, x):
        return self.b(self.a(x))


def build() -> dict:
    net = Net()
    return {"net": net, "optimizer": nn.SGD(net.trainable_params())}

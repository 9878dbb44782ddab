"""GA105 bad: auto_prefix=False around two cells that each name their parameter "w"."""

import numpy as np
from mindspore import Parameter, Tensor, nn

SUBJECT = "w"


class Scale(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.w = Parameter(Tensor(np.ones((4,), np.float32)), name="w")  # <- SARIF

    def construct(self, x):
        return x * self.w


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__(auto_prefix=False)
        self.a = Scale()
        self.b = Scale()

    def construct(self, x):
        return self.b(self.a(x))


def build() -> dict:
    # No optimizer: MindSpore's optimizers refuse this network (its name 'w' already exists),
    # but save_checkpoint accepts it and silently writes one "w".
    return {"net": Net()}

"""GA307 good: refinement runs the designed 3 times; its inner cells are pinned too."""

import numpy as np
from mindspore import Tensor, nn, ops

from graphaudit import Spec

DESIGN = Spec(calls={"refine": 3, "refine.*": 3, "stem": 1, "head": 1})


class Refiner(nn.Cell):
    def __init__(self, steps: int = 3) -> None:
        super().__init__()
        self.steps = steps
        self.stem = nn.Dense(4, 8)
        self.refine = nn.SequentialCell([nn.Dense(8, 8), nn.Tanh()])
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        x = ops.relu(self.stem(x))
        for _ in range(self.steps):
            x = x + self.refine(x)
        return self.head(x)


def build() -> dict:
    net = Refiner()
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 4), np.float32)),
        "spec": DESIGN,
    }

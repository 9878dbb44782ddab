"""GA307 bad: iterative refinement meant to run 3 times runs twice (off-by-one range)."""

import numpy as np
from mindspore import Tensor, nn, ops

from graphaudit import Spec

SUBJECT = "refine"

DESIGN = Spec(calls={"refine": 3, "stem": 1})


class Refiner(nn.Cell):
    def __init__(self, steps: int = 3) -> None:
        super().__init__()
        self.steps = steps
        self.stem = nn.Dense(4, 8)
        self.refine = nn.SequentialCell([nn.Dense(8, 8), nn.Tanh()])  # <- SARIF
        self.head = nn.Dense(8, 2)

    def construct(self, x):
        x = ops.relu(self.stem(x))
        for _ in range(1, self.steps):  # the bug: range(self.steps)
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

"""GA308 bad: construct() defines self.relu but never calls it: fc1 and fc2 make one linear map."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "fc2"


class MLP(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Dense(20, 64)
        self.relu = nn.ReLU()
        self.fc2 = nn.Dense(64, 64)  # <- SARIF
        self.act = nn.ReLU()
        self.head = nn.Dense(64, 10)

    def construct(self, x):
        x = self.fc1(x)  # the activation was forgotten here
        x = self.act(self.fc2(x))
        return self.head(x)


def build() -> dict:
    rng = np.random.default_rng(0)
    net = MLP()
    x = Tensor(rng.standard_normal((8, 20)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 8).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

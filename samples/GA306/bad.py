"""GA306 bad: an undeclared skip carries the encoder's output straight into the head."""

import numpy as np
from mindspore import Tensor, nn

from graphaudit import Spec

SUBJECT = "encoder"

DESIGN = Spec(
    expected_connections=[("encoder", "decoder"), ("decoder", "head")],
    exhaustive_connections=True,
)


class AutoEncoder(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.encoder = nn.SequentialCell([nn.Dense(8, 4), nn.ReLU()])  # <- SARIF
        self.decoder = nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()])
        self.head = nn.Dense(4, 8)

    def construct(self, x):
        z = self.encoder(x)
        return self.head(self.decoder(z) + z)  # the bug: the bottleneck is bypassed


def build() -> dict:
    net = AutoEncoder()
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "inputs": Tensor(np.ones((2, 8), np.float32)),
        "spec": DESIGN,
    }

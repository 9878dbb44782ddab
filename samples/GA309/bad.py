"""GA309 bad: a 7-layer MLP with sigmoid hidden activations and nothing else between the layers."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "layers.0"


class DeepSigmoid(nn.Cell):
    def __init__(self, depth: int = 6) -> None:
        super().__init__()
        cells = [nn.Dense(32, 64), nn.Sigmoid()]
        for _ in range(depth - 1):
            cells += [nn.Dense(64, 64), nn.Sigmoid()]
        self.layers = nn.SequentialCell(cells)  # <- SARIF
        self.head = nn.Dense(64, 10)

    def construct(self, x):
        return self.head(self.layers(x))


def build(width: int = 6) -> dict:
    """*width*: how many saturating layers (tests/test_widened_samples.py widens it)."""
    rng = np.random.default_rng(0)
    net = DeepSigmoid(width)
    x = Tensor(rng.standard_normal((16, 32)).astype(np.float32))
    y = Tensor(rng.integers(0, 10, 16).astype(np.int32))
    return {
        "net": net,
        "optimizer": nn.SGD(net.trainable_params(), 0.05),
        "inputs": (x,),
        "label": y,
        "loss_fn": nn.CrossEntropyLoss(),
    }

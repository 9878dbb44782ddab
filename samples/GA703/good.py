"""GA703 good: DivNoNan for the masked mean, a guarded norm, and a division by a constant."""

import numpy as np
from mindspore import Tensor, nn, ops


class MaskedMean(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Dense(8, 8)
        self.head = nn.Dense(8, 2)
        self.div_no_nan = ops.DivNoNan()

    def construct(self, x, mask):
        h = self.proj(x) * mask.expand_dims(-1) / 8.0**0.5
        pooled = self.div_no_nan(h.sum(axis=1), mask.sum(axis=1, keepdims=True))
        pooled = pooled / (ops.norm(pooled, dim=-1, keepdim=True) + 1e-6)
        return self.head(pooled)


def build() -> dict:
    net = MaskedMean()
    x = Tensor(np.ones((2, 5, 8), np.float32))
    mask = Tensor(np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], np.float32))
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3), "inputs": (x, mask)}

"""GA703 bad: masked mean pooling divides by the mask's count, zero for an all-padding row."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "(root)"


class MaskedMean(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.proj = nn.Dense(8, 8)
        self.head = nn.Dense(8, 2)

    def construct(self, x, mask):
        h = self.proj(x) * mask.expand_dims(-1)
        pooled = h.sum(axis=1) / mask.sum(axis=1, keepdims=True)
        return self.head(pooled)


def build() -> dict:
    net = MaskedMean()  # <- SARIF
    x = Tensor(np.ones((2, 5, 8), np.float32))
    mask = Tensor(np.array([[1, 1, 1, 0, 0], [0, 0, 0, 0, 0]], np.float32))  # second row: no token
    return {"net": net, "optimizer": nn.Adam(net.trainable_params(), 1e-3), "inputs": (x, mask)}

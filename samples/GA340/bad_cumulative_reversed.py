"""GA340 bad: a running mean from the end of the (B*T, C) flattening: each sample reads the samples after it.

The mix flows backwards, towards earlier samples: changing the last sample moves them all.
"""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "smooth"


class RunningMeanFromTheEnd(nn.Cell):
    """The mean of every step from this one to the last, meant per sequence (axis 1 of (B, T, C))."""

    def construct(self, x):
        b, t, c = x.shape
        rows = ops.flip(x.reshape(b * t, c), (0,))  # the samples' steps, last first
        steps = ops.arange(1, b * t + 1, dtype=x.dtype).reshape(-1, 1)
        return ops.flip(ops.cumsum(rows, axis=0) / steps, (0,)).reshape(b, t, c)


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Dense(4, 8)
        self.smooth = RunningMeanFromTheEnd()
        self.head = nn.Dense(8, 3)

    def construct(self, x):
        return self.head(self.smooth(self.embed(x)))


def build() -> dict:
    x = Tensor(np.random.default_rng(0).normal(size=(3, 6, 4)).astype(np.float32))
    return {"net": Net(), "inputs": x}

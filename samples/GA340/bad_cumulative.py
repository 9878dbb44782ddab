"""GA340 bad: a running mean over the (B*T, C) flattening: each sample reads the samples before it, never after.

Changing the last sample moves no other sample (nothing comes after it): only a probe that
sees a mix flowing one way, towards later samples, finds it.
"""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "smooth"


class RunningMean(nn.Cell):
    """The mean of every step so far, meant per sequence (axis 1 of (B, T, C))."""

    def construct(self, x):
        b, t, c = x.shape
        rows = x.reshape(b * t, c)  # the samples' steps one after another
        steps = ops.arange(1, b * t + 1, dtype=x.dtype).reshape(-1, 1)
        return (ops.cumsum(rows, axis=0) / steps).reshape(b, t, c)


class Net(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Dense(4, 8)
        self.smooth = RunningMean()
        self.head = nn.Dense(8, 3)

    def construct(self, x):
        return self.head(self.smooth(self.embed(x)))


def build() -> dict:
    x = Tensor(np.random.default_rng(0).normal(size=(3, 6, 4)).astype(np.float32))
    return {"net": Net(), "inputs": x}

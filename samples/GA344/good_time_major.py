"""GA344 good: the tagger kept time-major, its (B, T, C) input transposed to (T, B, C) and back.

The dependency probe runs along the batch (axis 0 of the tokens, the label says) and is
silent: the bidirectional LSTM makes each sample's steps depend on each other, never on
another sample.
"""

import numpy as np
from mindspore import Tensor, nn


class Tagger(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 16, bidirectional=True)  # reads (T, B, C)
        self.tag = nn.Dense(32, 5)

    def construct(self, tokens):
        out, _ = self.lstm(self.embed(tokens).swapaxes(0, 1))  # (T, B, 16)
        return self.tag(out.swapaxes(0, 1))


def build() -> dict:
    rng = np.random.default_rng(0)
    tokens = Tensor(rng.integers(0, 50, (4, 9)).astype(np.int32))
    tags = Tensor(rng.integers(0, 5, (4, 9)).astype(np.int32))
    return {"net": Tagger(), "inputs": tokens, "label": tags}

"""GA344 good: the same tagger, its LSTM built batch_first=True for the (B, T, C) it is fed."""

import numpy as np
from mindspore import Tensor, nn


class Tagger(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 16, batch_first=True)  # reads (B, T, C)
        self.tag = nn.Dense(16, 5)

    def construct(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.tag(out)


def build() -> dict:
    rng = np.random.default_rng(0)
    tokens = Tensor(rng.integers(0, 50, (4, 9)).astype(np.int32))
    tags = Tensor(rng.integers(0, 5, (4, 9)).astype(np.int32))  # one tag per token: axis 0 is the batch
    return {"net": Tagger(), "inputs": tokens, "label": tags}

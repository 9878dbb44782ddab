"""GA344 good: the sentence classifier kept time-major, its (B, T, C) input transposed to (T, B, C).

The dependency probe runs along the batch (axis 0 of the tokens, the label says) and is
silent: the bidirectional LSTM makes each sample's steps depend on each other, never on
another sample.
"""

import numpy as np
from mindspore import Tensor, nn


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 16, bidirectional=True)  # reads (T, B, C)
        self.head = nn.Dense(32, 5)

    def construct(self, tokens):
        out, _ = self.lstm(self.embed(tokens).swapaxes(0, 1))  # (T, B, 16)
        return self.head(out[-1])  # the last step: (B, 32)


def build() -> dict:
    rng = np.random.default_rng(0)
    tokens = Tensor(rng.integers(0, 50, (4, 9)).astype(np.int32))
    labels = Tensor(rng.integers(0, 5, (4,)).astype(np.int32))
    return {"net": Classifier(), "inputs": tokens, "label": labels}

"""GA344 good: the same sentence classifier, its LSTM built batch_first=True for the (B, T, C) it is fed."""

import numpy as np
from mindspore import Tensor, nn


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 16, batch_first=True)  # reads (B, T, C)
        self.head = nn.Dense(16, 5)

    def construct(self, tokens):
        out, _ = self.lstm(self.embed(tokens))
        return self.head(out[:, -1])  # the last step of each sentence (B, T, C thinking)


def build() -> dict:
    rng = np.random.default_rng(0)
    tokens = Tensor(rng.integers(0, 50, (4, 9)).astype(np.int32))
    labels = Tensor(rng.integers(0, 5, (4,)).astype(np.int32))  # one class per sentence: axis 0 is the batch
    return {"net": Classifier(), "inputs": tokens, "label": labels}

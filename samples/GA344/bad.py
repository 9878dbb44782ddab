"""GA344 bad: an LSTM sentence classifier built time-major (batch_first=False, the default) and fed (B, T, C)."""

import numpy as np
from mindspore import Tensor, nn

SUBJECT = "lstm"


class Classifier(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.lstm = nn.LSTM(16, 16)  # reads (T, B, C)  # <- SARIF
        self.head = nn.Dense(16, 5)

    def construct(self, tokens):
        out, _ = self.lstm(self.embed(tokens))  # fed (B, T, 16): the state runs from sample to sample
        return self.head(out[:, -1])  # the last step of each sentence (B, T, C thinking)


def build() -> dict:
    rng = np.random.default_rng(0)
    tokens = Tensor(rng.integers(0, 50, (4, 9)).astype(np.int32))
    labels = Tensor(rng.integers(0, 5, (4,)).astype(np.int32))  # one class per sentence: axis 0 is the batch
    return {"net": Classifier(), "inputs": tokens, "label": labels}

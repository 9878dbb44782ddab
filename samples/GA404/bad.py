"""GA404 bad: a text classifier ends in ops.softmax and is trained with nn.NLLLoss."""

import numpy as np
from mindspore import Tensor, nn, ops

SUBJECT = "NLLLoss"


class BagOfWords(nn.Cell):
    """Mean of token embeddings, then a linear layer over 6 classes."""

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.fc = nn.Dense(16, 6)

    def construct(self, tokens):
        return ops.softmax(self.fc(self.embed(tokens).mean(axis=1)), axis=-1)


def build() -> dict:
    rng = np.random.default_rng(0)
    net = BagOfWords()
    tokens = Tensor(rng.integers(0, 50, (4, 7)).astype(np.int32))
    labels = Tensor(rng.integers(0, 6, (4,)).astype(np.int32))
    return {
        "net": nn.WithLossCell(net, nn.NLLLoss()),  # <- SARIF
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (tokens, labels),
    }

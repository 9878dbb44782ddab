"""GA404 good: the text classifier ends in ops.log_softmax, which is what NLLLoss expects."""

import numpy as np
from mindspore import Tensor, nn, ops


class BagOfWords(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(50, 16)
        self.fc = nn.Dense(16, 6)

    def construct(self, tokens):
        return ops.log_softmax(self.fc(self.embed(tokens).mean(axis=1)), axis=-1)


def build() -> dict:
    rng = np.random.default_rng(0)
    net = BagOfWords()
    tokens = Tensor(rng.integers(0, 50, (4, 7)).astype(np.int32))
    labels = Tensor(rng.integers(0, 6, (4,)).astype(np.int32))
    return {
        "net": nn.WithLossCell(net, nn.NLLLoss()),
        "optimizer": nn.Adam(net.trainable_params(), 1e-3),
        "inputs": (tokens, labels),
    }

"""GA633 good: a port of a tiny PyTorch language model (original.pth, made by
scripts/references/make_samples.py) whose head is tied to its embedding, tied the same way."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent / "original.pth"


class Port(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 8)
        self.hidden = nn.Dense(8, 8, activation="tanh")
        self.head = nn.Dense(8, 32, has_bias=False)
        self.head.weight = self.embed.embedding_table  # tied, as the original

    def construct(self, ids):
        return self.head(self.hidden(self.embed(ids)))


def build() -> dict:
    ids = Tensor(np.random.default_rng(0).integers(0, 32, (2, 6)).astype(np.int32))
    return {"net": Port(), "inputs": ids, "reference": str(ORIGINAL)}

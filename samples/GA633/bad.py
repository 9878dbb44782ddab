"""GA633 bad: a port of a tiny PyTorch language model (original.pth) whose head the original ties
to its embedding (torch.save stores the tensor once, named twice): the port's head has a weight
of its own, which drifts away from the embedding as it trains."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent / "original.pth"


class Port(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(32, 8)  # <- SARIF
        self.hidden = nn.Dense(8, 8, activation="tanh")
        self.head = nn.Dense(8, 32, has_bias=False)  # not tied

    def construct(self, ids):
        return self.head(self.hidden(self.embed(ids)))


SUBJECT = "head.weight"


def build() -> dict:
    ids = Tensor(np.random.default_rng(0).integers(0, 32, (2, 6)).astype(np.int32))
    return {"net": Port(), "inputs": ids, "reference": str(ORIGINAL)}

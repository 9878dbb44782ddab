"""GA638 warning: a port of a PyTorch conv of stride 2 padded by 1 (original/, dumped by
scripts/references/make_attributes.py) that pads 'same': on this 7x7 input it pads 1 on each
side as the original does, but on an even size MindSpore's 'same' pads 0 before and 1 after."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent / "original"


class Port(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, pad_mode="same", has_bias=True)
        self.fc = nn.Dense(4 * 4 * 4, 2)

    def construct(self, x):
        return self.fc(self.conv(x).reshape(x.shape[0], -1))


SUBJECT = "conv"


def build() -> dict:
    x = Tensor(np.load(ORIGINAL / "inputs.npz")["0"])
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}

"""GA639 bad: a port of a PyTorch conv followed by a bilinear upsampling (original/) that
upsamples with align_corners=True where the original's is False: every value on another grid."""

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn

ORIGINAL = Path(__file__).resolve().parent / "original"


class Port(nn.Cell):
    """The original: Conv2d(3, 4, 3, padding=1), Upsample(scale_factor=2, mode="bilinear", align_corners=False)."""

    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.up = nn.Upsample(size=(12, 12), mode="bilinear", align_corners=True)  # the original: False  # <- SARIF

    def construct(self, x):
        return self.up(self.conv(x))


SUBJECT = "up"


def build() -> dict:
    x = Tensor(np.load(ORIGINAL / "inputs.npz")["0"])
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}

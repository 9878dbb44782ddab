"""GA632 bad: a port of a small PyTorch CNN (samples/GA630/original.safetensors) whose fc1 keeps
its weight (in, out) and multiplies x @ W: the original's Linear stores (out, in) = (16, 8), so
its weight loads into the port only transposed (a square one would load silently, wrong)."""

from pathlib import Path

import numpy as np
from mindspore import Parameter, Tensor, nn, ops
from mindspore.common.initializer import HeUniform, initializer

ORIGINAL = Path(__file__).resolve().parent.parent / "GA630" / "original.safetensors"


class InOutDense(nn.Cell):
    def __init__(self, n_in: int, n_out: int) -> None:
        super().__init__()
        self.weight = Parameter(initializer(HeUniform(), (n_in, n_out)), name="weight")  # (in, out)
        self.bias = Parameter(initializer("zeros", (n_out,)), name="bias")

    def construct(self, x):
        return ops.matmul(x, self.weight) + self.bias


class Port(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(8)
        self.fc1 = InOutDense(8, 16)  # <- SARIF
        self.fc2 = nn.Dense(16, 4)
        self.relu = nn.ReLU()

    def construct(self, x):
        x = self.relu(self.bn(self.conv(x))).mean((2, 3))
        return self.fc2(self.relu(self.fc1(x)))


SUBJECT = "fc1"


def build() -> dict:
    x = Tensor(np.random.default_rng(0).standard_normal((2, 3, 8, 8)).astype(np.float32))
    return {"net": Port(), "inputs": x, "reference": str(ORIGINAL)}

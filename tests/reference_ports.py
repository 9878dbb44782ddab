"""The ports of tests/test_reference_outputs.py: faithful MindSpore ports of small PyTorch models, or one bug planted.

The originals are PyTorch models (``scripts/references/make_planted.py``), dumped with their
weights and every module's inputs and outputs into ``tests/references/planted/``, and exported
to ONNX beside them. tests/test_reference_outputs.py, tests/test_reference_drawing.py,
tests/test_reference_msprobe.py and tests/test_html_browser.py audit them against those.
"""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
from mindspore import Parameter, Tensor, nn, ops

import graphaudit

PLANTED = Path(__file__).resolve().parent / "references" / "planted"


class SquareLayer(nn.Cell):
    """A Linear written by hand: ``x @ weight.T + bias``, or without the transpose (*forgets*)."""

    def __init__(self, width: int, forgets: bool) -> None:
        super().__init__()
        self.weight = Parameter(Tensor(np.zeros((width, width), np.float32)), name="weight")
        self.bias = Parameter(Tensor(np.zeros(width, np.float32)), name="bias")
        self.forgets = forgets

    def construct(self, x):
        weight = self.weight if self.forgets else self.weight.T
        return ops.matmul(x, weight) + self.bias


class MLP(nn.Cell):
    def __init__(self, bug: str = "") -> None:
        super().__init__()
        self.bug = bug
        self.fc1 = nn.Dense(8, 16, has_bias=bug != "dropped-bias")
        self.act = nn.GELU() if bug == "swapped-activation" else nn.ReLU()
        self.mid = SquareLayer(16, forgets=bug == "transposed-weight")
        self.norm = nn.LayerNorm((16,), epsilon=1e-1 if bug == "epsilon" else 1e-5)
        self.fc2 = nn.Dense(16, 4)

    def construct(self, x):
        if self.bug == "layer-order":
            return self.fc2(self.norm(self.mid(self.fc1(self.act(x)))))
        return self.fc2(self.norm(self.mid(self.act(self.fc1(x)))))


class CNN(nn.Cell):
    def __init__(self, bug: str = "") -> None:
        super().__init__()
        self.bug = bug
        self.conv = nn.Conv2d(3, 4, 3, pad_mode="pad", padding=1, has_bias=True)
        self.bn = nn.BatchNorm2d(4, eps=1e-2 if bug == "batchnorm-epsilon" else 1e-5)
        self.act = nn.ReLU()
        self.pool = nn.AvgPool2d(2, 2) if bug == "pool-kind" else nn.MaxPool2d(2, 2)
        self.fc = nn.Dense(64, 10)

    def construct(self, x):
        x = self.pool(self.act(self.bn(self.conv(x))))
        if self.bug == "flatten-order":
            x = x.transpose(0, 2, 3, 1)
        return self.fc(x.reshape(x.shape[0], -1))


class Attention(nn.Cell):
    def __init__(self, width: int, heads: int, bug: str) -> None:
        super().__init__()
        self.heads, self.head_width, self.bug = heads, width // heads, bug
        self.q, self.k, self.v, self.o = (nn.Dense(width, width) for _ in range(4))
        self.softmax = nn.Softmax(axis=1 if bug == "softmax-axis" else -1)

    def construct(self, x):
        b, t, _ = x.shape

        def split(y):
            return y.view(b, t, self.heads, self.head_width).transpose(0, 2, 1, 3)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        scores = ops.matmul(q, k.transpose(0, 1, 3, 2))
        if self.bug != "attention-scale":
            scores = scores / math.sqrt(self.head_width)
        weights = self.softmax(scores)
        return self.o(ops.matmul(weights, v).transpose(0, 2, 1, 3).reshape(b, t, -1))


class TinyTransformer(nn.Cell):
    def __init__(self, bug: str = "") -> None:
        super().__init__()
        self.bug = bug
        self.embed = nn.Embedding(16, 8)
        self.norm = nn.LayerNorm((8,), epsilon=1e-5)
        self.attn = Attention(8, 2, bug)
        self.extra = nn.Dense(8, 8) if bug == "added-layer" else None
        self.head = nn.Dense(8, 16)

    def construct(self, ids):
        x = self.embed(ids)
        if self.bug != "embedding-scale":
            x = x * math.sqrt(8)
        attended = self.attn(self.norm(x))
        x = attended if self.bug == "dropped-residual" else x + attended
        if self.extra is not None:
            x = self.extra(x)
        return self.head(x)


#: bug -> (port class, original, the finding (check, subject)).
PLANTED_BUGS = {
    "swapped-activation": (MLP, "mlp", ("GA640", "act")),
    "transposed-weight": (MLP, "mlp", ("GA640", "mid")),
    "epsilon": (MLP, "mlp", ("GA640", "norm")),
    "layer-order": (MLP, "mlp", ("GA640", "(root)")),
    "dropped-bias": (MLP, "mlp", ("GA630", "fc1")),
    "flatten-order": (CNN, "cnn", ("GA640", "(root)")),
    "pool-kind": (CNN, "cnn", ("GA640", "pool")),
    "batchnorm-epsilon": (CNN, "cnn", ("GA640", "bn")),
    "softmax-axis": (TinyTransformer, "attention", ("GA640", "attn.softmax")),
    "attention-scale": (TinyTransformer, "attention", ("GA640", "attn")),
    "dropped-residual": (TinyTransformer, "attention", ("GA640", "(root)")),
    "embedding-scale": (TinyTransformer, "attention", ("GA640", "(root)")),
    "added-layer": (TinyTransformer, "attention", ("GA631", "extra")),
}
PORTS = {"mlp": MLP, "cnn": CNN, "attention": TinyTransformer}


def audit(net: nn.Cell, original: str, kind: str = "dump") -> graphaudit.Report:
    folder = PLANTED / original
    batch = Tensor(np.load(folder / "inputs.npz")["0"])
    reference = str(folder) if kind == "dump" else str(PLANTED / f"{original}.onnx")
    return graphaudit.audit(net, inputs=batch, reference=reference, select=["GA63", "GA64"])

"""Write the PyTorch originals that tests/test_reference_outputs.py plants port bugs against.

Run where torch is installed (never by the tests, which need no torch)::

    PYTHONPATH=. /path/to/torchenv/bin/python scripts/references/make_planted.py

Each original is dumped by :func:`graphaudit.reference.dump` (its weights and every module's
inputs and outputs on one batch, seeded) into ``tests/references/planted/<name>/``, and
exported by ``torch.onnx.export`` to ``tests/references/planted/<name>.onnx`` (weights unfolded;
``cnn_folded.onnx`` is the CNN exported with the defaults, its BatchNorm folded away):

- ``mlp``: :class:`MLP`, Linear, ReLU, a square Linear, LayerNorm, Linear;
- ``cnn``: :class:`CNN`, Conv2d, BatchNorm2d (trained-looking statistics), ReLU, MaxPool2d,
  flatten, Linear;
- ``attention``: :class:`TinyTransformer`, an embedding scaled by sqrt(width), one pre-norm
  block (self-attention with its softmax as a module, a residual) and a head;
- ``keywords``: :class:`Keywords`, called by keyword (``input_ids=``, ``attention_mask=``) as a
  transformers model is, its second parameter ``token_type_ids`` (dumped only, no ONNX).
"""

from __future__ import annotations

import math
from pathlib import Path

import torch
from torch import nn

from graphaudit.reference import dump

ROOT = Path(__file__).resolve().parents[2]
OUT = ROOT / "tests" / "references" / "planted"


class MLP(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(8, 16)
        self.act = nn.ReLU()
        self.mid = nn.Linear(16, 16)
        self.norm = nn.LayerNorm(16)
        self.fc2 = nn.Linear(16, 4)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc2(self.norm(self.mid(self.act(self.fc1(x)))))


class CNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.bn = nn.BatchNorm2d(4)
        self.act = nn.ReLU()
        self.pool = nn.MaxPool2d(2)
        self.fc = nn.Linear(4 * 4 * 4, 10)
        with torch.no_grad():  # as trained: statistics and an affine transform that are not the identity
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.01, 0.05)
            self.bn.weight.uniform_(0.5, 1.5)
            self.bn.bias.uniform_(-0.2, 0.2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(self.act(self.bn(self.conv(x))))
        return self.fc(torch.flatten(x, 1))


class Attention(nn.Module):
    def __init__(self, width: int, heads: int) -> None:
        super().__init__()
        self.heads, self.head_width = heads, width // heads
        self.q, self.k, self.v, self.o = (nn.Linear(width, width) for _ in range(4))
        self.softmax = nn.Softmax(dim=-1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, _ = x.shape

        def split(y: torch.Tensor) -> torch.Tensor:
            return y.view(b, t, self.heads, self.head_width).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        weights = self.softmax(q @ k.transpose(-1, -2) / math.sqrt(self.head_width))
        return self.o((weights @ v).transpose(1, 2).reshape(b, t, -1))


class TinyTransformer(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.width = 8
        self.embed = nn.Embedding(16, 8)
        self.norm = nn.LayerNorm(8)
        self.attn = Attention(8, 2)
        self.head = nn.Linear(8, 16)

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        x = self.embed(ids) * math.sqrt(self.width)
        x = x + self.attn(self.norm(x))
        return self.head(x)


class Keywords(nn.Module):
    """Called by keyword as a transformers model is: ``model(input_ids=..., attention_mask=...)``.

    Its second argument is ``token_type_ids``: a batch passed by position would put the mask there.
    """

    def __init__(self) -> None:
        super().__init__()
        self.embed = nn.Embedding(16, 8)
        self.types = nn.Embedding(2, 8)
        self.norm = nn.LayerNorm(8)
        self.head = nn.Linear(8, 4)

    def forward(
        self,
        input_ids: torch.Tensor,
        token_type_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
    ) -> torch.Tensor:
        x = self.embed(input_ids)
        if token_type_ids is not None:
            x = x + self.types(token_type_ids)
        x = self.norm(x)
        if attention_mask is not None:
            x = x * attention_mask[..., None].to(x.dtype)
        return self.head(x)


def write_keywords() -> None:
    """``keywords/``: :class:`Keywords` dumped on a dict batch (input_ids, attention_mask)."""
    torch.manual_seed(0)
    model = Keywords()
    ids = torch.randint(0, 16, (2, 5), dtype=torch.int32)
    mask = torch.tensor([[1, 1, 1, 0, 0], [1, 1, 1, 1, 1]], dtype=torch.int32)
    dump(model, {"input_ids": ids, "attention_mask": mask}, str(OUT / "keywords"))


def write(name: str, model: nn.Module, batch: torch.Tensor) -> None:
    """The dump of *model* on *batch*, and beside it ``<name>.onnx`` (the legacy exporter, weights unfolded)."""
    dump(model, (batch,), str(OUT / name))
    torch.onnx.export(
        model.eval(),
        (batch,),
        str(OUT / f"{name}.onnx"),
        opset_version=17,
        dynamo=False,
        do_constant_folding=False,  # folding fuses or transposes weights: keep the original's
        training=torch.onnx.TrainingMode.PRESERVE,  # EVAL would fold BatchNorm into the conv
    )


def main() -> None:
    torch.manual_seed(0)
    write("mlp", MLP(), torch.randn(2, 8))
    torch.manual_seed(0)
    write("cnn", CNN(), torch.randn(2, 3, 8, 8))
    torch.manual_seed(0)  # as a user exports by default: BatchNorm folded into the convolution
    torch.onnx.export(CNN().eval(), (torch.randn(2, 3, 8, 8),), str(OUT / "cnn_folded.onnx"), dynamo=False)
    torch.manual_seed(0)
    write("attention", TinyTransformer(), torch.randint(0, 16, (2, 6), dtype=torch.int32))
    write_keywords()


if __name__ == "__main__":
    main()

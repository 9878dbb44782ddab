"""Write the PyTorch original the attribute checks' samples and tests compare ports with (GA635-GA638).

Run where torch is installed (never by the tests, which need no torch)::

    PYTHONPATH=. /path/to/torchenv/bin/python scripts/references/make_attributes.py

:class:`Original` has a layer of each kind whose attributes a port gets wrong: a convolution
padded by 1, a BatchNorm (eps 1e-5, torch's momentum 0.1), the exact GELU, a max pool with
``ceil_mode=True``, an average pool with ``count_include_pad=False``, a LayerNorm with BERT's
eps 1e-12 and a Dropout of rate 0.1. It is dumped by :func:`graphaudit.reference.dump` into
``samples/GA635/original/`` (its attributes in ``manifest.json``) and exported by
``torch.onnx.export`` to ``tests/references/planted/attributes.onnx`` (weights unfolded).
:class:`Strided`, a conv of stride 2 padded by 1 on a 7x7 input, is dumped into
``samples/GA638/original/`` (the case where MindSpore's ``"same"`` pads alike: an odd size).
``tests/references/planted/attributes_weights_only/`` is :class:`Original` dumped
``activations=False`` (``--weights-only``). :class:`Upsampler` (a bilinear ``nn.Upsample``,
``align_corners=False``) is dumped into ``samples/GA639/original/`` and exported to
``tests/references/planted/upsample.onnx``.
"""

from __future__ import annotations

from pathlib import Path

import torch
from torch import nn

from graphaudit.reference import dump

ROOT = Path(__file__).resolve().parents[2]


class Original(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.act = nn.GELU()
        self.pool = nn.MaxPool2d(3, stride=2, padding=1, ceil_mode=True)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.fc = nn.Linear(8 * 5 * 5, 16)
        self.norm = nn.LayerNorm(16, eps=1e-12)
        self.drop = nn.Dropout(0.1)
        self.head = nn.Linear(16, 4)
        with torch.no_grad():  # as trained: statistics that are not the identity
            self.bn.running_mean.uniform_(-0.5, 0.5)
            self.bn.running_var.uniform_(0.5, 1.5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.avg(self.pool(self.act(self.bn(self.conv(x)))))
        return self.head(self.drop(self.norm(self.fc(x.flatten(1)))))


class Strided(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, stride=2, padding=1)
        self.fc = nn.Linear(4 * 4 * 4, 2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc(self.conv(x).flatten(1))


class Upsampler(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.up = nn.Upsample(scale_factor=2, mode="bilinear", align_corners=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.up(self.conv(x))


def main() -> None:
    torch.manual_seed(0)
    model, batch = Original(), torch.randn(2, 3, 8, 8)
    dump(model, (batch,), str(ROOT / "samples" / "GA635" / "original"))
    torch.onnx.export(
        model.eval(),
        (batch,),
        str(ROOT / "tests" / "references" / "planted" / "attributes.onnx"),
        opset_version=17,
        dynamo=False,
        do_constant_folding=False,
        training=torch.onnx.TrainingMode.PRESERVE,
    )
    # the same original dumped --weights-only: its weights and attributes, no batch run
    dump(
        model,
        None,
        str(ROOT / "tests" / "references" / "planted" / "attributes_weights_only"),
        activations=False,
    )
    torch.manual_seed(0)
    dump(Strided(), (torch.randn(2, 3, 7, 7),), str(ROOT / "samples" / "GA638" / "original"))
    torch.manual_seed(0)
    model, batch = Upsampler(), torch.randn(2, 3, 6, 6)
    dump(model, (batch,), str(ROOT / "samples" / "GA639" / "original"))
    torch.onnx.export(
        model.eval(),
        (batch,),
        str(ROOT / "tests" / "references" / "planted" / "upsample.onnx"),
        opset_version=17,
        dynamo=False,
        do_constant_folding=False,
    )


if __name__ == "__main__":
    main()

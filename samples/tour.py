"""The bundled sample: audit a small classifier that has real mistakes, print the report,
and draw it: ``out/sample.svg`` (the annotated graph) and ``out/sample.html`` (one
self-contained page: the graph, the findings table, click a finding to see its nodes).

Run it with ``bash scripts/run-sample.sh`` (which sets everything up first).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn, ops

import graphaudit


class Block(nn.Cell):
    def __init__(self, channels: int) -> None:
        super().__init__()
        self.conv = nn.Conv2d(channels, channels, 3)
        self.bn = nn.BatchNorm2d(channels)
        self.relu = nn.ReLU()

    def construct(self, x: Tensor) -> Tensor:
        return self.relu(self.bn(self.conv(x)) + x)


class SampleNet(nn.Cell):
    """A small multi-label CNN with two silent mistakes, and a design flaw.

    ``[block] * 3`` repeats one block object, and the Sigmoid at the end is followed by
    ``BCEWithLogitsLoss``, which applies a sigmoid of its own. The stem's convolution feeds the
    first block's with nothing non-linear between them; GA308 no longer reports it, because the
    stem's output is also read by the block's residual sum (a shared feature, as in an FPN).
    """

    def __init__(self, num_classes: int = 10) -> None:
        super().__init__()
        self.stem = nn.Conv2d(3, 8, 3)
        block = Block(8)
        self.body = nn.SequentialCell([block] * 3)  # meant: three separate blocks
        self.head = nn.Dense(8, num_classes)

    def construct(self, x: Tensor) -> Tensor:
        x = self.body(self.stem(x))
        return ops.sigmoid(self.head(x.mean(axis=(2, 3))))


def main() -> None:
    net = SampleNet()
    x = Tensor(np.random.default_rng(0).random((2, 3, 16, 16), dtype=np.float32))
    y = Tensor(np.zeros((2, 10), np.float32))
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    train_step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.BCEWithLogitsLoss()), optimizer)

    report = graphaudit.audit(train_step, inputs=(x, y))
    print(graphaudit.summarize(report.graph))
    print()
    print(report)

    out = Path(__file__).resolve().parent.parent / "out"
    out.mkdir(exist_ok=True)
    svg = report.render(out / "sample.svg")
    html = report.render(out / "sample.html")
    print(f"\nannotated graph: {svg}\nHTML report:     {html}  (open it in a browser)")


if __name__ == "__main__":
    main()

"""The networks and reports tests/test_render.py draws, shared with tests/test_html_browser.py.

Cell and parameter names that are DOT syntax, escapes, HTML and an entity (:class:`Hostile`,
:func:`evil_report`), nested blocks (:func:`nested_report`), a network of 5000 cells
(:func:`big_net`) and the bundled sample (:func:`sample_report`).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
from mindspore import Tensor, nn
from nets import tensor

import graphaudit

EVIL_KEY = "<script>alert(1)</script>"
EVIL_PARAM = "<img src=x onerror=alert(2)>"
WEIRD_KEY = 'a"b\\n\nc&lt;{x} -> y;'


class Hostile(nn.Cell):
    """Three ReLU cells whose names are DOT syntax, escapes, HTML and a trailing backslash."""

    def __init__(self) -> None:
        super().__init__()
        for key in (WEIRD_KEY, EVIL_KEY, "tail\\"):
            nn.Cell.insert_child_to_cell(self, key, nn.ReLU())

    def construct(self, x: Tensor) -> Tensor:
        return x


class Evil(nn.Cell):
    """Cell and parameter names full of HTML, DOT syntax, quotes, a newline and an entity.

    ``nn.CellDict`` refuses such keys through its own ``__setitem__`` (MindSpore validates
    the parameter-name prefix), so they are inserted the way any Cell attribute can be.
    """

    def __init__(self) -> None:
        super().__init__()
        self.heads = nn.CellDict()
        nn.Cell.insert_child_to_cell(self.heads, EVIL_KEY, nn.Dense(4, 4))
        nn.Cell.insert_child_to_cell(self.heads, WEIRD_KEY, nn.Dense(4, 4))
        self.heads[WEIRD_KEY].bias.name = EVIL_PARAM

    def construct(self, x: Tensor) -> Tensor:
        return self.heads[EVIL_KEY](x) + self.heads[WEIRD_KEY](x)


def evil_report() -> graphaudit.Report:
    net = Evil()
    optimizer = nn.SGD(net.heads[EVIL_KEY].trainable_params())  # the other head is left out: GA201
    return graphaudit.audit(net, optimizer, inputs=tensor(1, 4))


class Nested(nn.Cell):
    """Three nested blocks and a head: clusters deep enough to make tall ranks beside the legend."""

    def __init__(self) -> None:
        super().__init__()
        self.blocks = nn.SequentialCell(
            [
                nn.SequentialCell([nn.SequentialCell([nn.Dense(4, 4), nn.ReLU()]) for _ in range(2)])
                for _ in range(3)
            ]
        )
        self.head = nn.Dense(4, 2)

    def construct(self, x):
        return self.head(self.blocks(x))


def nested_report() -> graphaudit.Report:
    net = Nested()
    return graphaudit.audit(net, nn.SGD(net.blocks.trainable_params()), inputs=tensor(1, 4))  # head left out


def big_net(stages: int = 50, width: int = 100) -> nn.Cell:
    """stages x width cells; consecutive stages differ, so that rolling up cannot shrink it."""
    acts = (nn.ReLU, nn.Tanh, nn.Sigmoid)
    return nn.SequentialCell(
        [
            nn.SequentialCell([nn.Dense(4, 4) if j % 2 == 0 else acts[s % 3]() for j in range(width)])
            for s in range(stages)
        ]
    )


ROOT = Path(__file__).resolve().parent.parent


def sample_report() -> graphaudit.Report:
    """The bundled sample (samples/tour.py), audited as ``scripts/run-sample.sh`` audits it."""
    import importlib.util

    spec = importlib.util.spec_from_file_location("graphaudit_tour", ROOT / "samples" / "tour.py")
    tour = importlib.util.module_from_spec(spec)  # type: ignore[arg-type]
    spec.loader.exec_module(tour)  # type: ignore[union-attr]
    net = tour.SampleNet()
    x = Tensor(np.random.default_rng(0).random((2, 3, 16, 16), dtype=np.float32))
    y = Tensor(np.zeros((2, 10), np.float32))
    optimizer = nn.Adam(net.trainable_params(), learning_rate=1e-3)
    train_step = nn.TrainOneStepCell(nn.WithLossCell(net, nn.BCEWithLogitsLoss()), optimizer)
    return graphaudit.audit(train_step, inputs=(x, y))

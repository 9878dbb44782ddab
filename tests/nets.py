"""Small, real MindSpore networks used across the tests."""

from __future__ import annotations

import numpy as np
from mindspore import Parameter, Tensor, nn, ops


def tensor(*shape: int, seed: int = 0) -> Tensor:
    return Tensor(np.random.default_rng(seed).standard_normal(shape).astype(np.float32))


class Residual(nn.Cell):
    """``relu(bn(conv(x)) + down(x))``: the ResNet pattern, with a functional add."""

    def __init__(self, cin: int = 3, cout: int = 4) -> None:
        super().__init__()
        self.conv = nn.Conv2d(cin, cout, 3)
        self.bn = nn.BatchNorm2d(cout)
        self.down = nn.SequentialCell([nn.Conv2d(cin, cout, 1), nn.BatchNorm2d(cout)])
        self.relu = nn.ReLU()

    def construct(self, x: Tensor) -> Tensor:
        identity = self.down(x)
        return self.relu(self.bn(self.conv(x)) + identity)


class Containers(nn.Cell):
    """Nesting, SequentialCell, CellList and CellDict, and a cell reused in two places."""

    def __init__(self) -> None:
        super().__init__()
        self.stem = nn.SequentialCell([nn.Dense(4, 8), nn.ReLU()])
        self.blocks = nn.CellList([nn.Dense(8, 8), nn.Dense(8, 8)])
        self.heads = nn.CellDict({"cls": nn.Dense(8, 3), "box": nn.Dense(8, 2)})
        self.act = nn.Tanh()
        self.again = self.act  # the same cell object under a second name

    def construct(self, x: Tensor) -> tuple[Tensor, Tensor]:
        x = self.stem(x)
        for block in self.blocks:
            x = self.act(block(x))
        x = self.again(x)
        return self.heads["cls"](x), self.heads["box"](x)


class Tied(nn.Cell):
    """A decoder whose weight is the embedding table (weight tying, as in language models)."""

    def __init__(self, vocab: int = 10, dim: int = 6) -> None:
        super().__init__()
        self.embed = nn.Embedding(vocab, dim)
        self.decoder = nn.Dense(dim, vocab, has_bias=False)
        self.decoder.weight = self.embed.embedding_table

    def construct(self, ids: Tensor) -> Tensor:
        return self.decoder(self.embed(ids))


class TwoInputs(nn.Cell):
    """Two inputs, functional ops between cells (cat, sigmoid, reshape, mul), two outputs."""

    def __init__(self) -> None:
        super().__init__()
        self.left = nn.Dense(3, 4)
        self.right = nn.Dense(5, 4)
        self.head = nn.Dense(8, 2)
        self.scale = Parameter(Tensor(np.ones((1, 2), np.float32)), name="scale")

    def construct(self, a: Tensor, b: Tensor) -> tuple[Tensor, Tensor]:
        joined = ops.cat((self.left(a), self.right(b)), axis=1)
        gate = ops.sigmoid(self.head(joined)) * self.scale
        return gate, joined.reshape(-1)


class Repeated(nn.Cell):
    """``SequentialCell([block] * 3)``: one block object in three slots, called three times."""

    def __init__(self) -> None:
        super().__init__()
        block = nn.Dense(4, 4)
        self.layers = nn.SequentialCell([block] * 3)

    def construct(self, x: Tensor) -> Tensor:
        return self.layers(x)


class Raises(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)

    def construct(self, x: Tensor) -> Tensor:
        x = self.fc(x)
        raise RuntimeError("deliberate failure in construct")


class TrainModeNet(nn.Cell):
    """BatchNorm (updates moving statistics) and Dropout (draws random numbers) in training."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 8)
        self.bn = nn.BatchNorm1d(8)
        self.drop = nn.Dropout(p=0.5)

    def construct(self, x: Tensor) -> Tensor:
        return self.drop(self.bn(self.fc(x)))


class AssignsParameter(nn.Cell):
    """Writes a trainable parameter in construct (a running sum kept in a Parameter)."""

    def __init__(self) -> None:
        super().__init__()
        self.fc = nn.Dense(4, 4)
        self.total = Parameter(Tensor(np.zeros((4,), np.float32)), name="total")

    def construct(self, x: Tensor) -> Tensor:
        y = self.fc(x)
        ops.assign_add(self.total, y.sum(0))
        return y

"""GA305 bad: a two-tower model whose item tower is fed the user embedding by mistake."""

import numpy as np
from mindspore import Tensor, nn

from graphaudit import Spec

SUBJECT = "user_tower"

DESIGN = Spec(forbidden_connections=[("user_tower", "item_tower"), ("item_tower", "user_tower")])


class TwoTower(nn.Cell):
    def __init__(self) -> None:
        super().__init__()
        self.user_tower = nn.SequentialCell([nn.Dense(6, 8), nn.ReLU(), nn.Dense(8, 8)])  # <- SARIF
        self.item_tower = nn.SequentialCell([nn.Dense(8, 8), nn.ReLU(), nn.Dense(8, 8)])

    def construct(self, user, item):
        u = self.user_tower(user)
        v = self.item_tower(item + u)  # the bug: the item tower sees the user
        return (u * v).sum(-1)


def build() -> dict:
    net = TwoTower()
    return {
        "net": net,
        "optimizer": nn.Adam(net.trainable_params()),
        "inputs": (Tensor(np.ones((2, 6), np.float32)), Tensor(np.ones((2, 8), np.float32))),
        "spec": DESIGN,
    }

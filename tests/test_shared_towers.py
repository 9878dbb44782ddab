"""Two towers sharing one embedding run side by side: no connection between them (issue 19, pattern 4).

Before: ``Spec.from_net`` (and ``graphaudit spec snapshot``) of a correct two-tower model
whose towers hold one ``nn.Embedding`` recorded ``expected_connections = [("q", "d")]``: the
embedding's call inside ``d`` was placed at its first path, ``q.embed``. The model with the
sharing broken (each tower its own embedding) then got, besides the true GA103, a false
GA304 (the missing ``q -> d``) and a false GA307 (``q.embed`` called once, "expected 2").
A cell or parameter the towers share is not a tensor flowing between them; a real flow
from one tower into the other is still found.
"""

from __future__ import annotations

import numpy as np
import pytest
from mindspore import Tensor, nn

import graphaudit

IDS = Tensor(np.random.default_rng(0).integers(0, 50, (4, 6)).astype(np.int32))


class Tower(nn.Cell):
    def __init__(self, embed: nn.Cell) -> None:
        super().__init__()
        self.embed = embed
        self.proj = nn.Dense(8, 8)

    def construct(self, ids, extra=None):
        h = self.embed(ids).mean(axis=1)
        return self.proj(h if extra is None else h + extra)


class TwoTower(nn.Cell):
    def __init__(self, sharing: str = "cell", feed: bool = False) -> None:
        super().__init__()
        embed = nn.Embedding(50, 8)
        self.q = Tower(embed)
        other = embed if sharing == "cell" else nn.Embedding(50, 8)
        if sharing == "parameter":
            other.embedding_table = embed.embedding_table  # one table, two cells
        self.d = Tower(other)
        self.feed = feed

    def construct(self, q_ids, d_ids):
        q = self.q(q_ids)
        d = self.d(d_ids, q) if self.feed else self.d(d_ids)
        return (q * d).sum(axis=-1)


@pytest.mark.parametrize("sharing", ["cell", "parameter"])
def test_a_shared_embedding_is_no_connection_between_the_towers(sharing):
    spec = graphaudit.Spec.from_net(TwoTower(sharing), inputs=(IDS, IDS))
    assert spec.expected_connections == []
    net = TwoTower(sharing)
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), inputs=(IDS, IDS), spec=spec)
    assert not [f for f in report.findings if f.severity != "info"], str(report)


def test_the_broken_sharing_is_one_finding_ga103():
    spec = graphaudit.Spec.from_net(TwoTower("cell"), inputs=(IDS, IDS))
    broken = TwoTower("none")
    report = graphaudit.audit(broken, nn.SGD(broken.trainable_params()), inputs=(IDS, IDS), spec=spec)
    assert [(f.check_id, f.subject) for f in report.findings if f.severity == "error"] == [
        ("GA103", "d.embed")
    ]


def test_a_real_flow_from_one_tower_into_the_other_is_still_found():
    fed = TwoTower("cell", feed=True)  # d also reads q's output
    assert graphaudit.Spec.from_net(fed, inputs=(IDS, IDS)).expected_connections == [("q", "d")]

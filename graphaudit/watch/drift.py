"""Under ``msrun``: are the ranks' weights still equal, every few steps of the real run?

Data parallelism keeps one copy of the weights per rank and averages the gradients, so the
copies stay bit-identical only while every rank applies the same update. A rank that skips
the all-reduce, clips differently or keeps a different optimizer state drifts away, and
nothing raises. :class:`RankDrift` hashes the weights with the fingerprints GA801 uses
(:mod:`graphaudit.distributed.hashing`), exchanges them with ``AllGather`` every
``DRIFT_EVERY`` sampled steps (a collective: every rank's watch calls it at the same step),
and records the parameters whose hashes differ (watchpoint GA962).

BatchNorm's moving statistics are left out: each rank updates them from its own shard of the
batch in the forward pass, so they rightly differ across ranks (without ``SyncBatchNorm``,
which has no CPU kernel in MindSpore 2.10) — see
:func:`~graphaudit.distributed.hashing.per_rank_statistics`.
"""

from __future__ import annotations

from typing import Any

from graphaudit.evidence.training import RunRecord

__all__ = ["DRIFT_EVERY", "RankDrift", "differing"]

#: Compare the ranks every this many sampled steps (and at the first).
DRIFT_EVERY = 4


def differing(fingerprints: list[Any], skip: frozenset[str] = frozenset()) -> tuple[str, ...]:
    """The parameters (but those in *skip*) whose digests are not the same on every rank, in name order."""
    names = sorted({name for fp in fingerprints for name in fp.parameters} - skip)
    return tuple(
        name
        for name in names
        if len({fp.parameters[name].digest if name in fp.parameters else None for fp in fingerprints}) > 1
    )


class RankDrift:
    """Compares the ranks' weights at the sampled steps of a distributed run."""

    def __init__(self, net: Any, record: RunRecord, every: int, world_size: int) -> None:
        from graphaudit.distributed.hashing import per_rank_statistics

        self.net, self.record, self.every, self.world_size = net, record, every, world_size
        self.statistics = per_rank_statistics(net)
        record.world_size = world_size

    @classmethod
    def when_distributed(cls, net: Any, record: RunRecord, every: int) -> RankDrift | None:
        """A drift watch when ``mindspore.communication`` is initialised with two ranks or more."""
        from graphaudit.distributed.hashing import communication_world

        world = communication_world()
        if world is None or world[1] < 2:
            return None
        return cls(net, record, every, world[1])

    def maybe_compare(self, step: int) -> None:
        if step != 1 and step % (self.every * DRIFT_EVERY) != 0:
            return
        from graphaudit.distributed.hashing import fingerprint_network, gather_fingerprints

        gathered = gather_fingerprints(fingerprint_network(self.net), self.world_size)
        self.record.drift_checks += 1
        names = differing(gathered, self.statistics)
        if names:
            self.record.drift.append((step, names))

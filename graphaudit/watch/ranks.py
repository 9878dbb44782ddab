"""Under ``msrun``: every rank's loss and gradient norm at each sampled step of the real run.

Each rank of a data-parallel job trains on its own shard, so each watch sees only its own
loss: a rank that reads every batch its neighbour reads (data not sharded), or a rank whose
shard is corrupt (labels shuffled, inputs on another scale, another data set), looks like a
healthy run from inside. :class:`RankLossExchange` all-gathers, at every sampled step, one
float32 vector of three numbers per rank (the loss, the total gradient norm, whether the
gradients were seen): 12 bytes a rank. Every rank then holds the same
:class:`~graphaudit.evidence.training.RankStep` list, so every rank's watchpoints (GA963,
GA964) reach the same verdict at the same step. It is a collective: every rank's watch calls
it at the same sampled steps (they sample alike: the same ``every``).

Example:
    >>> rank_step(4, np.array([[0.5, 2.0, 1.0], [0.75, 2.0, 1.0]], np.float32))
    RankStep(step=4, losses=(0.5, 0.75), grad_norms=(2.0, 2.0))
"""

from __future__ import annotations

import math

import numpy as np

from graphaudit.errors import GraphAuditError
from graphaudit.evidence.training import RankStep, RunRecord

__all__ = ["RankLossExchange", "local_vector", "rank_step"]


def local_vector(record: RunRecord, step: int) -> np.ndarray:
    """This rank's ``[loss, total gradient norm, gradients seen]`` at *step*, just recorded.

    The total norm is ``sqrt(sum of the parameters' norms squared)``; it is NaN (and the flag
    0) when the step's sample holds no gradients.
    """
    loss = record.losses[-1] if record.losses else math.nan
    sample = record.samples[-1] if record.samples and record.samples[-1].step == step else None
    norms = None if sample is None else sample.grad_norms
    if norms is None:
        return np.array([loss, math.nan, 0.0], np.float32)
    total = math.sqrt(math.fsum(n * n for n in norms if n is not None))
    return np.array([loss, total, 1.0], np.float32)


def rank_step(step: int, rows: np.ndarray) -> RankStep:
    """The :class:`RankStep` of the gathered ``(world, 3)`` rows."""
    losses = tuple(float(v) for v in rows[:, 0])
    if not rows[:, 2].any():
        return RankStep(step, losses)
    norms = tuple(float(v) if seen and math.isfinite(v) else None for v, seen in zip(rows[:, 1], rows[:, 2]))
    return RankStep(step, losses, norms)


class RankLossExchange:
    """All-gathers the ranks' losses at the sampled steps of a distributed run, into the record."""

    def __init__(self, record: RunRecord, every: int, world_size: int) -> None:
        from mindspore import ops

        self.record, self.every, self.world_size = record, every, world_size
        self._gather = ops.AllGather()  # made once: a primitive a step would cost more than the exchange
        record.world_size = world_size

    @classmethod
    def when_distributed(cls, record: RunRecord, every: int) -> RankLossExchange | None:
        """An exchange when ``mindspore.communication`` is initialised with two ranks or more."""
        from graphaudit.distributed.hashing import communication_world

        world = communication_world()
        if world is None or world[1] < 2:
            return None
        return cls(record, every, world[1])

    def maybe_exchange(self, step: int) -> None:
        """At a sampled step (the first and every ``every``-th, as the recorder samples): exchange."""
        if step != 1 and step % self.every != 0:
            return
        from mindspore import Tensor

        local = local_vector(self.record, step)
        gathered = self._gather(Tensor(local)).asnumpy()
        if gathered.size != 3 * self.world_size:
            raise GraphAuditError(
                f"AllGather returned {gathered.size} values for a world of {self.world_size}"
            )
        self.record.rank_steps.append(rank_step(step, gathered.reshape(self.world_size, 3)))

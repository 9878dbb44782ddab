"""What GA963 and GA964 share: the ranks' losses at the sampled steps, compared with each other and the noise.

Under ``msrun`` every rank of a data-parallel job reads its own shard, so at a sampled step
the ranks' losses are losses of different batches: they differ by about the run's
step-to-step noise (each rank's ``sigma``, estimated as the loss rules of
:mod:`graphaudit.checks._shared.watch` do: ``1.4826 * median(|diff|) / sqrt(2)``). Two ranks
whose losses agree to float32 rounding at every step read the same batches (GA963); a rank
whose loss sits many noises away from the others' at most steps reads other data (GA964).

Example:
    >>> from graphaudit.evidence.training import RankStep
    >>> steps = [RankStep(s, (1.0 / s, 1.0 / s)) for s in range(1, 6)]
    >>> identical_groups(steps)
    [(0, 1)]
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from graphaudit.evidence.training import RankStep

__all__ = [
    "DEPART",
    "MIN_DEPART_STEPS",
    "MIN_IDENTICAL_STEPS",
    "Departure",
    "departures",
    "identical_groups",
    "same",
]

#: GA963 judges this many sampled steps after the first, at least.
MIN_IDENTICAL_STEPS = 3
#: Two float32 losses within this many units of float32 rounding of each other are the same.
ROUNDING_ULPS = 4
#: GA964 judges this many sampled steps with every rank's loss finite, at least.
MIN_DEPART_STEPS = 8
#: A rank departs when at most steps (the median) its loss is this many noises from the others'.
DEPART = 3.0
_EPS32 = 2.0**-23


def same(a: float, b: float) -> bool:
    """*a* and *b* (float32 losses) are equal but for float32 rounding."""
    return abs(a - b) <= ROUNDING_ULPS * _EPS32 * max(abs(a), abs(b))


def _finite(steps: Sequence[RankStep]) -> list[RankStep]:
    return [s for s in steps if all(math.isfinite(v) for v in s.losses)]


def identical_groups(steps: Sequence[RankStep]) -> list[tuple[int, ...]]:
    """The groups of two ranks or more whose losses are the same at every finite sampled step after the first.

    Empty when fewer than :data:`MIN_IDENTICAL_STEPS` such steps were sampled, and for a group
    whose loss is the same at every step too (a loss that never moves, e.g. a network whose
    output is constant, is the same on any data: it says nothing about the shards).
    """
    judged = _finite(steps[1:])
    if len(judged) < MIN_IDENTICAL_STEPS:
        return []
    world = len(judged[0].losses)
    groups: list[tuple[int, ...]] = []
    placed: set[int] = set()
    for first in range(world):
        if first in placed:
            continue
        members = tuple(
            r
            for r in range(first, world)
            if r not in placed and all(same(s.losses[first], s.losses[r]) for s in judged)
        )
        placed.update(members)
        moves = any(not same(s.losses[first], judged[0].losses[first]) for s in judged)
        if len(members) > 1 and moves:
            groups.append(members)
    return groups


def _sigma(values: Sequence[float]) -> float:
    diffs = [abs(b - a) for a, b in zip(values, values[1:])]
    return 1.4826 * statistics.median(diffs) / math.sqrt(2.0) if diffs else 0.0


@dataclass(frozen=True)
class Departure:
    """The ranks that depart, and the numbers that say so."""

    ranks: tuple[int, ...]
    means: tuple[float, ...]  # every rank's mean loss over the judged steps
    distance: tuple[float, ...]  # every rank's median |loss - the others' median loss|, in noises
    sigma: float  # the run's noise: the lower median of the ranks' step-to-step noises
    steps: int


def departures(steps: Sequence[RankStep]) -> Departure | None:
    """The ranks whose loss lies more than :data:`DEPART` noises from the others' at most steps, or ``None``.

    At each finite sampled step, a rank's distance is ``|its loss - the other rank's|`` (two
    ranks) or ``|its loss - the median of every rank's|`` (three or more); a rank departs when the median of its distances over the steps is above
    ``DEPART * sigma``. ``sigma`` is the lower median of the ranks' step-to-step noises (with
    two ranks, the quieter one's): a corrupt rank's loss is often far noisier than the others'
    (inputs 10x too large) and must not widen the yardstick it is measured with. With two
    ranks the distance is symmetric: both depart, or neither.
    """
    judged = _finite(steps)
    if len(judged) < MIN_DEPART_STEPS:
        return None
    world = len(judged[0].losses)
    series = [[s.losses[r] for s in judged] for r in range(world)]
    noises = sorted(_sigma(values) for values in series)
    scale = statistics.median(abs(v) for values in series for v in values)
    sigma = max(noises[(world - 1) // 2], 1e-6 * max(scale, 1.0))  # a loss that never moves has no noise
    # with two ranks, each one's distance to the other; with more, to the median of all (the MAD's
    # centre): the median of "the others" would move a healthy rank half-way to a corrupt one
    centres = [statistics.median(s.losses) for s in judged]
    distance = []
    for r in range(world):
        gaps = [abs(s.losses[r] - (s.losses[1 - r] if world == 2 else c)) for s, c in zip(judged, centres)]
        distance.append(statistics.median(gaps) / sigma)
    ranks = tuple(r for r in range(world) if distance[r] > DEPART)
    if not ranks:
        return None
    means = tuple(statistics.fmean(values) for values in series)
    return Departure(ranks, means, tuple(distance), sigma, len(judged))

"""What the checks of the ranks' data (GA802-GA804) judge, on the ranks' facts alone.

Each judgement takes the ranks' :class:`~graphaudit.distributed.fingerprint.DataFacts` as
``(rank label, facts)`` pairs in rank order (:class:`~graphaudit.evidence.ranks.RankData`)
and runs no MindSpore, so it is tested on hand-made facts; the checks turn its verdict into a
finding, named after the audited rank's own pipeline (:func:`source_paths`).

Example:
    >>> from graphaudit.distributed.fingerprint import DataFacts, SourceShard
    >>> whole = SourceShard("NumpySlicesDataset", 1, 0, "RandomSampler", "global")
    >>> facts = DataFacts((whole,), 8, 8, "same", "p", 0)
    >>> not_sharded([("rank 0", facts), ("rank 1", facts)]).measured
    True
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.distributed.fingerprint import DataFacts, SourceShard
from graphaudit.text import counted, listing

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = [
    "NotSharded",
    "SeenDifferently",
    "ShardSizes",
    "groups",
    "not_sharded",
    "seen_differently",
    "shard_sizes",
    "sharded",
    "source_paths",
]

Ranks = Sequence[tuple[str, DataFacts]]

#: Shuffle modes that leave the rows in order (see ``operations.sampler_shuffle``).
_IN_ORDER = {"", "none"}


def sharded(source: SourceShard) -> bool:
    """Whether the source reads a part of its data set (``num_shards=`` or a ``DistributedSampler``)."""
    return source.num_shards > 1


def groups(ranks: Ranks, key: Callable[[DataFacts], Hashable]) -> list[list[str]]:
    """The rank labels grouped by *key* of their facts, the largest group first (ties: rank order).

    Example:
        >>> from graphaudit.distributed.fingerprint import DataFacts
        >>> f = lambda seed: DataFacts((), None, None, None, "", seed)
        >>> groups([("rank 0", f(1)), ("rank 1", f(2)), ("rank 2", f(2))], lambda d: d.seed)
        [['rank 1', 'rank 2'], ['rank 0']]
    """
    found: dict[Hashable, list[str]] = {}
    for label, facts in ranks:
        found.setdefault(key(facts), []).append(label)
    return sorted(found.values(), key=len, reverse=True)


@dataclass(frozen=True)
class NotSharded:
    """GA802's verdict: these ranks read the same rows (``measured``: their first batches are equal)."""

    same: tuple[tuple[str, ...], ...]  #: the groups of ranks that read the same data
    measured: bool

    def describe(self) -> str:
        ranks = listing((listing(group, limit=None) for group in self.same), None, separator="; ")
        if self.measured:
            return f"the first batch sampled on {ranks} is the same (the same rows, in the same order)"
        return f"the pipelines of {ranks} read the same rows: no source reads its own shard"


def not_sharded(ranks: Ranks) -> NotSharded | None:
    """The ranks that read every sample alike, when the world has two ranks or more (GA802).

    The first batches are sampled on every rank under one dataset seed
    (:data:`graphaudit.distributed.rank_setup.SAMPLING_SEED`), so they differ only when the
    ranks read different rows: a pipeline sharded by the user's own code (each rank reading
    its own files, ``num_shards=1``) is silent; an unsharded source shuffled with a seed per
    rank is not (it still reads the whole data set on every rank). Ranks with equal first
    batches are reported even when others could not be sampled; when fewer than two ranks
    could be (sampling off, it failed, a shard is empty) and their batches per epoch agree,
    the sources' sharding decides: not one source sharded on any rank, or every rank holding
    the same shard of it.
    """
    if len(ranks) < 2:
        return None
    measured = [(label, facts) for label, facts in ranks if facts.first_batch is not None]
    same = [group for group in groups(measured, lambda f: f.first_batch) if len(group) > 1]
    if same:
        return NotSharded(tuple(map(tuple, same)), True)
    if len(measured) >= 2:
        return None  # the ranks that could be sampled read different rows
    if len({facts.batches for _, facts in ranks if facts.batches is not None}) > 1:
        return (
            None  # not the same rows, whatever the sources say (an empty shard has no first batch): GA803's
        )
    if any(sharded(source) for _, facts in ranks for source in facts.sources):
        shards = groups(ranks, lambda f: tuple((s.num_shards, s.shard_id) for s in f.sources))
        if len(shards) > 1:
            return None
        # every rank holds the same shard: shard_id=0 written on every rank
        return NotSharded((tuple(label for label, _ in ranks),), False)
    if not any(facts.sources for _, facts in ranks):
        return None  # no source seen: nothing to say
    return NotSharded((tuple(label for label, _ in ranks),), False)


@dataclass(frozen=True)
class ShardSizes:
    """GA803's verdict: the batches per epoch of each group of ranks (``empty``: some rank has none)."""

    sizes: tuple[tuple[int, tuple[str, ...]], ...]  #: (batches, ranks), the most common first

    @property
    def empty(self) -> tuple[str, ...]:
        return tuple(label for size, labels in self.sizes if size == 0 for label in labels)

    def describe(self) -> str:
        return listing(
            (
                f"{listing(labels, limit=None)}: {counted(size, 'batch', 'batches')}"
                for size, labels in self.sizes
            ),
            None,
            separator="; ",
        )


def shard_sizes(ranks: Ranks) -> ShardSizes | None:
    """The batches per epoch when they differ across the ranks that report them (GA803).

    A rank whose size MindSpore could not tell cheaply (``batches`` is ``None``) is left out;
    two ranks must report one.
    """
    known = [(label, facts) for label, facts in ranks if facts.batches is not None]
    if len(known) < 2:
        return None
    found = groups(known, lambda f: f.batches)
    if len(found) < 2:
        return None
    size = {label: facts.batches for label, facts in known}
    return ShardSizes(tuple((int(size[g[0]] or 0), tuple(g)) for g in found))


@dataclass(frozen=True)
class SeenDifferently:
    """GA804's verdict: the seeds of a sharded, shuffled source differ, or the preprocessing does."""

    seeds: tuple[tuple[int | None, tuple[str, ...]], ...] = ()  #: (seed, ranks) when they differ
    preprocessing: tuple[tuple[str, ...], ...] = ()  #: the groups of ranks that preprocess alike


def _shuffled_shards(facts: DataFacts) -> bool:
    """A source cut by a shuffling ``DistributedSampler``: the mechanism measured. File sources
    (``TFRecordDataset``, ``CSVDataset``...) shard by files and are not judged on their seeds."""
    return any(
        sharded(s) and s.sampler == "DistributedSampler" and s.shuffle not in _IN_ORDER for s in facts.sources
    )


def seen_differently(ranks: Ranks) -> SeenDifferently | None:
    """How the ranks' data differ beyond their shard (GA804), ``None`` when they do not.

    The seeds count when a source is sharded and shuffled on some rank: MindSpore's
    ``DistributedSampler`` shuffles the whole index list with its seed, then takes the rank's
    slice, so slices cut from different orders overlap. The preprocessing digests leave the
    sources out (the ranks may read different files).
    """
    if len(ranks) < 2:
        return None
    seeds: tuple[tuple[int | None, tuple[str, ...]], ...] = ()
    if any(_shuffled_shards(facts) for _, facts in ranks):
        known = [(label, facts) for label, facts in ranks if facts.seed is not None]
        by_seed = groups(known, lambda f: f.seed)
        if len(by_seed) > 1:
            seed = {label: facts.seed for label, facts in known}
            seeds = tuple((seed[g[0]], tuple(g)) for g in by_seed)
    by_steps = groups(ranks, lambda f: f.preprocessing)
    steps = tuple(map(tuple, by_steps)) if len(by_steps) > 1 else ()
    return SeenDifferently(seeds, steps) if seeds or steps else None


def source_paths(ctx: AuditContext) -> list[str]:
    """The audited rank's own sources (``train/NumpySlicesDataset#1``), in the order its facts list them."""
    from graphaudit.evidence.dataset import TrainingData
    from graphaudit.graph import pipeline as gp

    graph = ctx.need(TrainingData).graph
    nodes = [n for n in graph.nodes if graph.nodes[n].get("kind") == gp.SOURCE]
    return [graph.nodes[n]["path"] for n in sorted(nodes, key=lambda n: (graph.nodes[n].get("order", 0), n))]

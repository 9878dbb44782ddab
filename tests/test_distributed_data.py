"""GA802-GA804 on the ranks' data: the real collective audits of the samples, and the judgements alone.

The samples' ``rank_worker`` runs ``graphaudit.audit(net, optimizer, dataset=ds)`` on both
ranks of the shared ``msrun`` job (:mod:`graphaudit.distributed.jobs`) and writes the findings
to ``report<rank>.json``: every rank's own audit must report the bad sample's check, and not the
good one's (tests/test_samples.py audits rank 0 again in this process, with ``peers=``). The
judgements of :mod:`graphaudit.checks._shared.rank_data` are tested on hand-made facts.
"""

from __future__ import annotations

import json

import pytest
from sample_audits import SAMPLES

from graphaudit.checks._shared.rank_data import not_sharded, seen_differently, shard_sizes
from graphaudit.distributed.fingerprint import DataFacts, SourceShard

WHOLE = SourceShard("NumpySlicesDataset", 1, 0, "RandomSampler", "global")


def shard(rank: int, shuffle: str = "global") -> SourceShard:
    return SourceShard("NumpySlicesDataset", 2, rank, "DistributedSampler", shuffle)


def facts(
    source: SourceShard = WHOLE,
    *,
    batch: str | None = "b",
    batches: int | None = 8,
    steps: str = "p",
    seed: int | None = 0,
) -> DataFacts:
    return DataFacts((source,), batches, 16, batch, steps, seed)


def ranks(*each: DataFacts) -> list[tuple[str, DataFacts]]:
    return [(f"rank {i}", f) for i, f in enumerate(each)]


# -- the real job: every rank's own collective audit ---------------------------------------------
@pytest.mark.slow
@pytest.mark.parametrize("check_id", ["GA802", "GA803", "GA804"])
def test_every_ranks_collective_audit_reports_the_bad_sample_and_not_the_good(check_id):
    from graphaudit.distributed.jobs import sample_folder

    for which, expected in (("bad", True), ("good", False)):
        folder = sample_folder(SAMPLES / check_id / f"{which}.py")
        for rank in (0, 1):
            found = json.loads((folder / f"report{rank}.json").read_text(encoding="utf-8"))
            ids = {f["check_id"] for f in found if f["severity"] != "info"}
            # the bad sample draws its own check alone (GA803's own uneven split is not GA802's,
            # GA804's shards are not GA802's), the good one nothing, on every rank
            assert ids == ({check_id} if expected else set()), (which, rank, found)


# -- GA802 ----------------------------------------------------------------------------------------
def test_equal_first_batches_are_measured_evidence():
    verdict = not_sharded(ranks(facts(), facts(), facts(batch="other")))
    assert verdict is not None and verdict.measured
    assert verdict.same == (("rank 0", "rank 1"),)


def test_the_users_own_sharding_is_silent():
    """Rank-specific files behind num_shards=1: the first batches differ, nothing is said."""
    assert not_sharded(ranks(facts(batch="a"), facts(batch="b"))) is None


def test_without_first_batches_the_sources_decide():
    unsharded = ranks(facts(batch=None), facts(batch=None))
    assert not not_sharded(unsharded).measured
    assert not_sharded(ranks(facts(shard(0), batch=None), facts(shard(1), batch=None))) is None
    same_shard = not_sharded(ranks(facts(shard(0), batch=None), facts(shard(0), batch=None)))
    assert same_shard is not None and not same_shard.measured


def test_an_empty_users_shard_is_not_called_unsharded():
    """The user's own split leaves rank 1 nothing: no first batch there, and GA803's error, not GA802's."""
    assert not_sharded(ranks(facts(batches=8), facts(batch=None, batches=0))) is None
    partly = not_sharded(ranks(facts(), facts(), facts(batch=None)))
    assert partly is not None and partly.same == (("rank 0", "rank 1"),)


def test_one_rank_is_not_data_parallel():
    assert not_sharded(ranks(facts())) is None
    assert shard_sizes(ranks(facts())) is None
    assert seen_differently(ranks(facts())) is None


# -- GA803 ----------------------------------------------------------------------------------------
def test_shard_sizes_differ_and_an_empty_shard_is_named():
    assert shard_sizes(ranks(facts(), facts())) is None
    uneven = shard_sizes(ranks(facts(batches=12), facts(batches=4)))
    assert uneven is not None and not uneven.empty
    assert uneven.describe() == "rank 0: 12 batches; rank 1: 4 batches"
    assert shard_sizes(ranks(facts(batches=4), facts(batches=0))).empty == ("rank 1",)


def test_an_unknown_size_is_left_out():
    assert shard_sizes(ranks(facts(batches=8), facts(batches=None))) is None
    assert shard_sizes(ranks(facts(batches=8), facts(batches=None), facts(batches=8))) is None


# -- GA804 ----------------------------------------------------------------------------------------
def test_seeds_count_only_for_a_sharded_shuffled_source():
    differ = seen_differently(ranks(facts(shard(0), seed=1234), facts(shard(1), seed=1235)))
    assert differ is not None and differ.seeds == ((1234, ("rank 0",)), (1235, ("rank 1",)))
    in_order = ranks(facts(shard(0, "none"), seed=1), facts(shard(1, "none"), seed=2))
    assert seen_differently(in_order) is None
    # an unsharded source shuffled per rank is GA802's: the whole set on every rank
    assert seen_differently(ranks(facts(seed=1), facts(seed=2))) is None
    assert seen_differently(ranks(facts(shard(0), seed=7), facts(shard(1), seed=7))) is None
    files = [SourceShard("TFRecordDataset", 2, r, "", "global") for r in (0, 1)]  # sharded by files
    assert seen_differently(ranks(facts(files[0], seed=1), facts(files[1], seed=2))) is None


def test_different_preprocessing_is_reported_by_group():
    verdict = seen_differently(ranks(facts(steps="a"), facts(steps="a"), facts(steps="b")))
    assert verdict is not None and not verdict.seeds
    assert verdict.preprocessing == (("rank 0", "rank 1"), ("rank 2",))

"""The ranks' setups (parallel context, reducer, data) travel with their fingerprints: GA805, GA806.

The samples' jobs (one shared msrun job, :mod:`graphaudit.distributed.jobs`) also audit
collectively on every rank and keep each rank's findings: read here, no extra launch.
"""

from __future__ import annotations

import json

import pytest
from mindspore import nn
from sample_audits import SAMPLES

import graphaudit
from graphaudit.distributed.fingerprint import DataFacts, Fingerprint, RankSetup, SourceShard
from graphaudit.distributed.jobs import sample_folder
from graphaudit.fingerprint import fingerprint


@pytest.mark.slow
@pytest.mark.parametrize("check_id", ["GA805", "GA806"])
def test_every_rank_of_the_collective_audit_reports_the_bad_setup_and_not_the_good(check_id):
    for which, expected in (("bad", True), ("good", False)):
        folder = sample_folder(SAMPLES / check_id / f"{which}.py")
        for rank in (0, 1):
            found = json.loads((folder / f"report{rank}.json").read_text())
            assert any(c == check_id for c, _, _ in found) is expected, (which, rank, found)
            assert not [f for f in found if f[2] != "info" and f[0] != check_id], (which, rank, found)


def test_a_setup_survives_the_file_and_an_old_file_without_one_is_read_and_said_missing(tmp_path):
    facts = DataFacts(
        (SourceShard("ImageFolderDataset", 8, 3, "DistributedSampler", "global"),), 10, 4, "ab", "cd", 5
    )
    net = nn.Dense(2, 2)
    mine = fingerprint(net, rank=0, world_size=2)
    assert mine.setup is not None and mine.setup.parallel_mode == "stand_alone"
    theirs = fingerprint(net, rank=1, world_size=2)
    theirs.setup = RankSetup("data_parallel", False, "sum", facts)
    theirs.save(tmp_path / "rank1.json")
    assert Fingerprint.load(tmp_path / "rank1.json").setup == theirs.setup
    old = theirs.to_dict()
    del old["setup"]  # what graphaudit wrote before setups existed
    (tmp_path / "old.json").write_text(json.dumps(old))
    assert Fingerprint.load(tmp_path / "old.json").setup is None
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), peers=[tmp_path / "old.json"])
    assert "no setup" in report.skipped.get("GA805", ""), report.skipped.get("GA805")
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()), peers=[tmp_path / "rank1.json"])
    assert [f.check_id for f in report.findings if f.check_id == "GA805"] == ["GA805"]
    assert "rank 1" in report.by_check("GA805")[0].message


def test_a_malformed_setup_is_a_fingerprint_error_naming_the_file(tmp_path):
    data = fingerprint(nn.Dense(2, 2), rank=1, world_size=2).to_dict()
    data["setup"] = {"parallel_mode": "data_parallel"}  # no gradients_mean
    (tmp_path / "rank1.json").write_text(json.dumps(data))
    with pytest.raises(graphaudit.GraphAuditError, match=r"rank1\.json.*setup.*malformed"):
        Fingerprint.load(tmp_path / "rank1.json")


def test_a_rank_that_does_not_join_the_exchange_leaves_the_rank_checks_not_run_with_the_reason(monkeypatch):
    """MindSpore fails a CPU AllGather whose peer never joins after about 30 s (measured): said in words."""
    import graphaudit.distributed.hashing as hashing

    class NeverJoined:
        def __call__(self, tensor):
            raise RuntimeError("Launch kernel failed, name:Default/AllGather-op0\n- C++ Call Stack: ...")

    monkeypatch.setattr(hashing, "communication_world", lambda: (0, 2))
    monkeypatch.setattr(hashing.ops, "AllGather", NeverJoined)
    net = nn.Dense(2, 2)
    report = graphaudit.audit(net, nn.SGD(net.trainable_params()))
    for check_id in ("GA801", "GA805"):
        reason = report.skipped.get(check_id, "")
        assert "did not join" in reason and "every rank" in reason and "C++" not in reason, reason

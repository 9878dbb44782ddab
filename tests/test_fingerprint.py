"""Weight fingerprints, compare(), GA801 offline and under msrun with a real AllGather."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import twins
from mindspore import Parameter, Tensor, nn

import graphaudit
from graphaudit.checks.context import AuditContext
from graphaudit.cli import main as cli_main
from graphaudit.distributed import hashing as capture_fp
from graphaudit.evidence.ranks import RankFingerprints
from graphaudit.fingerprint import Fingerprint, FingerprintError, compare, fingerprint

WORKER = twins.TESTS / "dist_worker.py"
BAD_SUBJECTS = ["conv.weight", "fc.weight"]  # the randomly initialised parameters of dist_worker.Net


def dense(seed: int, bias: float = 0.0) -> nn.Dense:
    init = Tensor(np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32))
    return nn.Dense(4, 2, weight_init=init, bias_init=Tensor(np.full((2,), bias, np.float32)))


class Pair(nn.Cell):
    def __init__(self, seed_a: int = 0, seed_b: int = 1) -> None:
        super().__init__()
        self.a = dense(seed_a)
        self.b = dense(seed_b)

    def construct(self, x):
        return self.a(x) + self.b(x)


# --------------------------------------------------------------------------- fingerprint()


def test_digest_depends_on_content_shape_and_dtype_only():
    one, two = fingerprint(dense(0)), fingerprint(dense(0))
    assert one.parameters == two.parameters
    assert fingerprint(dense(1)).parameters["weight"].digest != one.parameters["weight"].digest
    values = np.arange(6, dtype=np.float32)
    flat = capture_fp.digest_parameter(Parameter(Tensor(values), name="p"))
    shaped = capture_fp.digest_parameter(Parameter(Tensor(values.reshape(2, 3)), name="p"))
    as_int = capture_fp.digest_parameter(Parameter(Tensor(values.view(np.int32)), name="p"))
    assert len({flat.digest, shaped.digest, as_int.digest}) == 3
    assert shaped.shape == (2, 3) and shaped.dtype == "Float32" and len(shaped.digest) == 32


def test_fingerprint_reads_without_changing_and_counts_shared_parameters_once():
    block = nn.Dense(4, 4)
    net = nn.SequentialCell([block, block])
    before = {p.name: p.asnumpy().copy() for p in net.get_parameters()}
    fp = fingerprint(net, rank=3, world_size=4)
    assert sorted(fp.parameters) == sorted(before) and len(fp.parameters) == 2
    assert all(np.array_equal(p.asnumpy(), before[p.name]) for p in net.get_parameters())
    assert (fp.rank, fp.world_size, fp.network, fp.version) == (
        3,
        4,
        "SequentialCell",
        graphaudit.__version__,
    )
    assert fp.hostname == socket.gethostname()


def test_fingerprint_defaults_to_the_msrun_environment(monkeypatch):
    monkeypatch.setenv("RANK_ID", "1")
    monkeypatch.setenv("RANK_SIZE", "8")
    assert (fingerprint(dense(0)).rank, fingerprint(dense(0)).world_size) == (1, 8)
    monkeypatch.delenv("RANK_ID")
    monkeypatch.delenv("RANK_SIZE")
    monkeypatch.delenv("MS_NODE_ID", raising=False)
    monkeypatch.delenv("MS_WORKER_NUM", raising=False)
    assert (fingerprint(dense(0)).rank, fingerprint(dense(0)).world_size) == (0, 1)


def test_fingerprint_rejects_what_is_not_a_cell():
    with pytest.raises(graphaudit.GraphAuditError, match=r"expects a mindspore\.nn\.Cell"):
        fingerprint([1, 2])


def test_communication_is_not_initialised_here_and_is_not_initialised_by_asking():
    from mindspore.communication.management import GlobalComm

    assert capture_fp.communication_world() is None
    assert GlobalComm.INITED is False


def test_save_and_load_round_trip(tmp_path):
    fp = fingerprint(Pair(), rank=1, world_size=2)
    path = tmp_path / "deep" / "rank1.json"
    fp.save(path)
    data = json.loads(path.read_text())
    assert data["format"] == "graphaudit-fingerprint" and data["rank"] == 1 and data["world_size"] == 2
    assert data["hostname"] and data["graphaudit_version"] == graphaudit.__version__
    assert set(data["parameters"]["a.weight"]) == {"digest", "shape", "dtype", "requires_grad"}
    loaded = Fingerprint.load(path)
    assert loaded == fp and loaded.source == str(path)


@pytest.mark.parametrize(
    ("text", "match"),
    [
        (None, "cannot read"),
        ("{not json", "is not JSON"),
        ('{"parameters": {}}', "not a graphaudit fingerprint"),
        ('{"format": "graphaudit-fingerprint", "format_version": 99, "parameters": {}}', "format_version 99"),
        (
            '{"format": "graphaudit-fingerprint", "format_version": 1, "parameters": {"w": {}}}',
            "'w' is malformed",
        ),
        ('{"format": "graphaudit-fingerprint", "format_version": 1, "parameters": {}, "rank": -1}', "rank"),
    ],
)
def test_load_errors_say_what_is_wrong(tmp_path, text, match):
    path = tmp_path / "rank0.json"
    if text is not None:
        path.write_text(text)
    with pytest.raises(FingerprintError, match=match):
        Fingerprint.load(path)


# --------------------------------------------------------------------------- compare()


def test_compare_names_which_ranks_agree_with_which():
    fps = [fingerprint(Pair(0, 1), rank=r, world_size=3) for r in range(3)]
    fps[1] = fingerprint(Pair(0, 7), rank=1, world_size=3)
    assert [f.subject for f in compare([fps[0], fps[2]])] == ["(world)"]  # identical, but rank 1 not given
    findings = compare(fps)
    assert [(f.subject, f.severity) for f in findings] == [("b.weight", "error")]
    message = findings[0].message
    assert "ranks 0, 2 agree on" in message and "rank 1 has" in message, message
    assert findings[0].check_id == "GA801" and findings[0].name == "weights-differ-across-ranks"


def test_compare_reports_missing_parameters_shape_changes_and_frozen_ones():
    base = Pair()
    other = Pair()
    other.b = nn.Dense(4, 3)  # another shape, another name set below
    extra = nn.SequentialCell([dense(0), dense(1), dense(2)])
    fp0 = fingerprint(base, rank=0, world_size=2)
    fp1 = fingerprint(other, rank=1, world_size=2)
    reshaped = next(f.message for f in compare([fp0, fp1]) if f.subject == "b.weight")
    assert "2x4 Float32" in reshaped and "3x4 Float32" in reshaped, reshaped
    fp2 = fingerprint(extra, rank=1, world_size=2)
    missing = {
        f.subject: f for f in compare([fingerprint(nn.SequentialCell([dense(0), dense(1)]), rank=0), fp2])
    }
    assert "2.weight" in missing and "exists on rank 1 but not on rank 0" in missing["2.weight"].message

    frozen0, frozen1 = Pair(), Pair(0, 5)
    for net in (frozen0, frozen1):
        net.b.weight.requires_grad = False
    (finding,) = compare(
        [fingerprint(frozen0, rank=0, world_size=2), fingerprint(frozen1, rank=1, world_size=2)]
    )
    assert finding.severity == "warning" and "BatchNorm" in finding.message


def test_compare_warns_when_the_world_is_incomplete_or_ranks_collide():
    fp = fingerprint(Pair(), rank=0, world_size=4)
    other = fingerprint(Pair(), rank=2, world_size=4)
    (world,) = compare([fp, other])
    assert world.subject == "(world)" and "ranks 1, 3 not compared" in world.message
    twin = fingerprint(Pair(0, 9), rank=0, world_size=1)
    twin.source = "/x/copy.json"
    findings = compare([fingerprint(Pair(), rank=0, world_size=1), twin])
    assert any("claim the same rank" in f.message for f in findings)
    assert any("rank 0 (copy.json)" in f.message for f in findings if f.subject == "b.weight")
    assert compare([fp]) == []


def test_gather_fingerprints_packs_and_unpacks_every_rank(monkeypatch):
    """The AllGather protocol, with a fake two-rank AllGather (rank 1 holds a longer payload)."""
    local = fingerprint(Pair(), rank=0, world_size=2)
    remote = fingerprint(nn.SequentialCell([Pair(0, 3), dense(4)]), rank=1, world_size=2)
    remote_bytes = json.dumps(remote.to_dict(), separators=(",", ":")).encode()
    calls = []

    def fake_all_gather(values):
        calls.append(values.dtype)
        if values.size == 1:
            return np.concatenate([values, np.array([len(remote_bytes)], np.int32)])
        padded = np.zeros(values.size * 4, np.uint8)
        padded[: len(remote_bytes)] = np.frombuffer(remote_bytes, np.uint8)
        return np.concatenate([values, padded.view("<i4")])

    monkeypatch.setattr(capture_fp, "_all_gather_int32", fake_all_gather)
    gathered = capture_fp.gather_fingerprints(local, 2)
    assert calls == [np.int32, np.int32]
    assert [fp.rank for fp in gathered] == [0, 1]
    assert gathered[0].parameters == local.parameters and gathered[1].parameters == remote.parameters


# --------------------------------------------------------------------------- GA801 offline


def test_ga801_does_not_run_without_communication_or_peers_and_says_so():
    net = Pair()
    report = graphaudit.audit(net)
    assert "GA801" not in report.checks_run and not report.by_check("GA801")
    assert "peers=" in report.skipped["GA801"] and "--peers" in next(
        n.text("cli") for n in report.not_run if n.check_id == "GA801"
    )


def test_ga801_compares_with_peer_fingerprints_from_files(tmp_path):
    net = Pair(0, 1)
    fingerprint(Pair(0, 2), rank=1, world_size=2).save(tmp_path / "rank1.json")
    report = graphaudit.audit(net, peers=[tmp_path / "rank1.json"])
    (finding,) = report.by_check("GA801")
    assert finding.subject == "b.weight" and finding.nodes == ("param:b.weight",)
    assert "rank 0 has" in finding.message and "rank 1 has" in finding.message
    assert not graphaudit.audit(net).by_check("GA801")  # the peers belong to one audit
    with pytest.raises(graphaudit.GraphAuditError, match=r"not a graphaudit fingerprint|cannot read"):
        graphaudit.audit(net, peers=[tmp_path / "missing.json"])
    with pytest.raises(TypeError, match=r"peers= takes a list"):
        graphaudit.audit(net, peers=str(tmp_path / "rank1.json"))


def test_ga801_reads_the_rank_fingerprints_evidence():
    net = Pair(0, 1)
    ranks = RankFingerprints(
        (fingerprint(net, rank=0, world_size=2), fingerprint(Pair(3, 1), rank=1, world_size=2))
    )
    ctx = AuditContext.build(net).with_evidence(ranks)
    check = graphaudit.checks.all_checks()["GA801"]
    assert [f.subject for f in check(ctx)] == ["a.weight"]


# --------------------------------------------------------------------------- processes


def _env() -> dict[str, str]:
    """A fresh process's environment (tests/twins.py), outside any msrun job; msrun runs `python`."""
    ranks = ("RANK_ID", "RANK_SIZE", "MS_NODE_ID", "MS_WORKER_NUM", "MS_ROLE", "MS_SCHED_PORT")
    path = os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])
    return twins.environment(PATH=path, **dict.fromkeys(ranks))


def _compare_json(files: list[Path], capsys) -> tuple[int, dict]:
    capsys.readouterr()
    code = cli_main(["compare", *map(str, files), "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def test_two_plain_processes_write_fingerprints_that_compare_reads(tmp_path, capsys):
    """The offline path: no communication, one process per rank, then `graphaudit compare`."""
    out = tmp_path / "out"
    procs = [
        twins.start(WORKER, "--rank", r, "--world-size", "2", "--out", out, env=_env()) for r in range(2)
    ]
    for proc in procs:
        twins.finish(proc, timeout=300)
    for case in ("same", "per-rank"):
        for r in range(2):
            report = json.loads((out / case / f"report_rank{r}.json").read_text())
            assert "GA801" in report["skipped"]  # no communication, no peers: it cannot run
            assert not [f for f in report["findings"] if f["check_id"] == "GA801"]
    code, same = _compare_json(sorted((out / "same").glob("rank*.json")), capsys)
    assert code == 0 and same["identical"] and same["findings"] == []
    code, bad = _compare_json(sorted((out / "per-rank").glob("rank*.json")), capsys)
    assert code == 1 and sorted(f["subject"] for f in bad["findings"]) == BAD_SUBJECTS
    assert [fp["rank"] for fp in bad["fingerprints"]] == [0, 1]


def _msrun() -> str | None:
    candidate = Path(sys.executable).parent / "msrun"
    return str(candidate) if candidate.exists() else shutil.which("msrun")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@pytest.fixture(scope="module")
def msrun_job(tmp_path_factory):
    msrun = _msrun()
    if msrun is None:
        pytest.skip(
            "msrun (MindSpore's distributed launcher) is not installed next to this Python or on PATH"
        )
    base = tmp_path_factory.mktemp("msrun")
    out, logs = base / "out", base / "logs"
    command = [
        msrun,
        "--worker_num=2",
        "--local_worker_num=2",
        f"--master_port={_free_port()}",
        "--join=True",
        f"--log_dir={logs}",
        str(WORKER),
        "--comm",
        "--out",
        str(out),
    ]
    started = time.perf_counter()
    proc = subprocess.Popen(
        command,
        env=_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,
        cwd=base,  # what msrun and its workers write next to their working folder stays out of the checkout
    )
    try:
        output = proc.communicate(timeout=400)[0]
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)  # msrun, its scheduler and its workers: one session we started
        output = proc.communicate()[0]
        pytest.fail(f"msrun did not finish in 400s:\n{output[-3000:]}")
    worker_logs = "\n".join(p.read_text(errors="replace")[-3000:] for p in sorted(logs.glob("worker_*.log")))
    assert proc.returncode == 0, f"{' '.join(command)}\n{output[-3000:]}\n{worker_logs}"
    return {"out": out, "logs": logs, "seconds": time.perf_counter() - started, "log_text": worker_logs}


@pytest.mark.slow
@pytest.mark.parametrize("case", ["same", "per-rank"])
def test_msrun_two_ranks_ga801_uses_the_collective(msrun_job, case, capsys):
    out = msrun_job["out"] / case
    expected = BAD_SUBJECTS if case == "per-rank" else []
    messages = set()
    for rank in range(2):
        report = json.loads((out / f"report_rank{rank}.json").read_text())
        ga801 = [f for f in report["findings"] if f["check_id"] == "GA801"]
        # one cause (a rank-dependent seed): one finding listing every parameter it changed
        assert len(ga801) == (1 if expected else 0), (rank, ga801)
        assert sorted(s for f in ga801 for s in f["subjects"]) == expected, (rank, ga801)
        assert all(f["severity"] == "error" and f["nodes"] for f in ga801)
        messages |= {f["message"] for f in ga801}
        fp = Fingerprint.load(out / f"rank{rank}.json")
        assert (fp.rank, fp.world_size) == (rank, 2)  # taken from the initialised communication
    if expected:
        assert len(messages) == 1  # both ranks saw the same world
        assert all("rank 0 has" in m and "rank 1 has" in m for m in messages)
    code, compared = _compare_json([out / "rank0.json", out / "rank1.json"], capsys)
    assert code == (1 if expected else 0)
    assert sorted(f["subject"] for f in compared["findings"]) == expected
    assert "rank 0/2" in msrun_job["log_text"] and "rank 1/2" in msrun_job["log_text"]


@pytest.mark.slow
def test_fingerprint_covers_every_parameter_of_resnet50():
    # what it costs (0.01-0.03x a forward pass, measured) is not asserted here: speed is the benchmarks'
    mindcv = pytest.importorskip("mindcv")
    net = mindcv.create_model("resnet50", pretrained=False)
    fp = fingerprint(net)
    assert len(fp.parameters) == len(net.parameters_dict())
    assert fingerprint(net).parameters == fp.parameters  # the same weights, the same fingerprint


def test_a_network_of_uninitialised_parameters_is_refused_and_left_uninitialised():
    with nn.utils.no_init_parameters():
        net = nn.Dense(3, 2)
    with pytest.raises(graphaudit.errors.ArgumentError, match="not initialised yet"):
        fingerprint(net)
    assert all(p.has_init for p in net.get_parameters())  # reading them would have made their values
    net.init_parameters_data()
    assert set(fingerprint(net).parameters) == {"weight", "bias"}

"""The benchmark (``benchmarks/run.py``) runs end to end on toy sizes and fills every row.

No timing is asserted: only that each measurement runs, the table has its rows, the load of
every group is recorded and printed, and the invariants of the weightless LLaMA-shaped audit
hold (those are behaviour, not timing). The measurements run in this process (not in
subprocesses) to keep the test short.
"""

from __future__ import annotations

import sys

import pytest

pytest.importorskip("mindcv")
if not sys.platform.startswith("linux"):
    pytest.skip("the benchmarks read /proc/self/status and /proc/stat", allow_module_level=True)

from benchmarks import groups, run
from benchmarks.common import GroupLoad, LoadMonitor

TOY_LM = {"layers": 2, "hidden": 16, "heads": 2, "ffn": 32, "seq": 8, "vocab": 50}
TOY_LLAMA = {"layers": 2, "hidden": 64, "ffn": 128, "vocab": 100}


@pytest.fixture(scope="module")
def measured():
    results = run.measure(
        model="synthetic:20",
        size=8,
        repeats=1,
        sizes=[10, 20, 40],
        traced_sizes=[10, 20],
        scale_repeats=1,
        render_stages=3,
        render_width=4,
        lm=TOY_LM,
        lm_repeats=1,
        amplify=3,
        llama=TOY_LLAMA,
        startup_repeats=1,
        probe_model="synthetic:20",
        probe_steps=2,
        probe_repeats=1,
        reference_repeats=1,  # the default 5 interleaved rounds of the ViT port and resnet: 20 s of this test
        dependency_size=8,
        dependency_repeats=1,
        watch_steps=1,
        watch_repeats=1,
        watch_graph_repeats=0,  # compiles resnet18's train step twice (plain, tapped): not in the smoke run
        watch_msrun_repeats=0,  # its row launches a 2-rank msrun job (~1 min): not in the smoke run
        torch_python="/nonexistent/python",  # the optional anchor: skipped, with the reason
        worker=run.run_worker,
        policy=run.LoadPolicy(log=lambda text: None),
    )
    return results, run.rows(results)


def test_benchmark_rows_on_toy_sizes(measured):
    results, table = measured
    items = [row["item"] for row in table]
    for number in [*"123456789", "10", "11", "12"]:
        assert any(item.startswith(number + " ") for item in items), number
    assert sum(item.startswith("10 synthetic:20 audit with probe=") for item in items) == 2
    dependency = [row for row in table if row["item"].startswith("11 dependency probe")]
    assert len(dependency) == 4 and all("; 2 passes; found: nothing" in row["note"] for row in dependency)
    assert sorted(row["baseline"] for row in dependency) == [
        "forward pass (inference)",
        "forward pass (inference)",
        "forward pass (training)",
        "forward pass (training)",
    ]
    assert sum("structure audit time" in item for item in items) == 2
    assert sum("traced audit peak memory" in item for item in items) == 1
    assert sum(item.startswith("9 start-up") for item in items) == 3
    for row in table:
        assert row["median"] is not None, row["item"]
        if not row["item"].startswith("7 LM tracing"):  # the bare wrapper's cost may vanish in toy noise
            assert row["baseline_median"] is not None, row["item"]
        assert row["group"] in results["groups"], row["item"]
    targets = {row["item"].split(" ", 1)[1]: row["target"] for row in table if row["target"]}
    assert targets["synthetic:20 structure-only audit"] == "<= 0.02x"
    assert targets["synthetic:20 full audit, training mode"] == "<= 1.2x"
    assert targets["synthetic:20 full audit, inference mode"] == "<= 1.1x"
    assert targets["synthetic:20 full audit + SVG, training mode"] == "<= 1.4x"
    assert targets["synthetic:20 audit with probe=1"] == "<= 1.6x"
    assert sum(item.startswith("6 synthetic:20 full audit") for item in items) == 4
    parts = [row for row in table if row["item"].startswith("6 synthetic:20 after a forward: ")]
    assert len(parts) == 4 and all(row["target"] is None for row in parts)  # information rows
    for mode in ("training", "inference"):
        split = results["model_memory"][f"parts:{mode}"]
        assert split["mindspore_mib"] == split["second_forward_mib"] + split["loss_first_mib"]
        python = results["model_memory"][f"python:{mode}"]
        assert python["python_peak_mib"] >= python["python_kept_mib"] > 0 and python["python_top"]
    assert targets["LM tracing overhead per traced op"] == "<= 3x"
    assert targets["Model.train resnet18, Watch() default"] == "<= 1.03x"
    assert targets["Model.train resnet18, Watch() every=1"] == "<= 1.3x"
    assert targets["Watch(every=1) extra peak memory"] == "<= 0.1x"
    assert not any(item.startswith("13 ") for item in items)
    text = run.format_table(results, table)
    assert (
        "13 torchview anchor skipped: --torch-python / $GRAPHAUDIT_TORCH_PYTHON '/nonexistent/python'" in text
    )
    assert "structure-only audit" in text and "load average (1/5/15 min) before" in text
    assert "usable cores" in text and "LM tracing overhead per traced op" in text


def test_every_group_records_its_load(measured):
    results, _ = measured
    for key, group in results["groups"].items():
        load = group["load"]
        assert len(load["load_before"]) == 3 and len(load["load_after"]) == 3, key
        assert load["cores"] >= 1 and load["wall_s"] > 0, key
        assert group["loaded"] == bool(group["reasons"]), key


def test_transformer_counts_traced_ops(measured):
    t = measured[0]["transformer"]
    assert t["traced_nodes"] == t["nodes"]["op"] + t["nodes"]["call"] > 0
    assert t["wrapper_calls"] >= t["traced_nodes"]
    # two embeddings, 16 per block (LayerNorm x2, Dense x6), the final LayerNorm: the tied head adds none
    assert t["parameters"] == 2 + 16 * TOY_LM["layers"] + 2


def test_lazy_llama_keeps_weights_uninitialised(measured):
    results, _ = measured
    inv = results["lazy"]["invariants"]
    assert inv["weights_uninitialised"], inv["initialised_after_audit"]
    assert inv["value_checks_not_run"], inv["value_check_reasons"]
    assert run.invariants_hold(results)


def test_startup_does_not_import_mindspore(measured):
    startup = measured[0]["startup"]
    assert set(startup["imports"]) == {"--help", "--version", "checks"}
    for name, checked in startup["imports"].items():
        assert not checked["mindspore_imported"], name
        assert startup["exit_codes"][name] == 0, name


def test_load_marking_rules():
    quiet = GroupLoad(
        cores=2,
        wall_s=10,
        load_before=[1, 1, 1],
        load_after=[1.5, 1, 1],
        load_max=2.5,
        own_cores=1.2,
        others_cores=0.1,
    )
    assert quiet.reasons(2) == []  # the benchmark's own share is not counted against it
    busy = GroupLoad(cores=2, wall_s=10, load_max=6.0, own_cores=1.0, others_cores=1.6)
    assert busy.reasons(2) == ["other processes used 1.60 cores > 1"]
    own_threads = GroupLoad(cores=2, wall_s=10, load_max=4.2, own_cores=2.0, others_cores=0.01)
    assert own_threads.reasons(2) == []  # the benchmark's own runnable threads raise the load average
    unknown = GroupLoad(cores=2, wall_s=10, load_max=6.0, own_cores=1.0, others_cores=None)
    assert unknown.reasons(2) == ["load average 6.0 - own 1.0 > 2"]
    lagging = GroupLoad(cores=2, wall_s=10, load_max=1.0, own_cores=1.0, others_cores=1.5)
    assert lagging.reasons(2) == ["other processes used 1.50 cores > 1"]
    with LoadMonitor(interval=0.01) as load:
        sum(range(10**5))
    assert load.own_cores >= 0 and load.load_max >= 0 and load.wall_s > 0


def test_max_load_refuses_a_group_that_stays_loaded(monkeypatch):
    monkeypatch.setattr(groups, "others_cores_now", lambda seconds: 0.0)
    monkeypatch.setattr(GroupLoad, "reasons", lambda self, threshold: ["too busy"])
    calls = []
    policy = run.LoadPolicy(max_load=2.0, retries=1, log=lambda text: None)
    with pytest.raises(run.Refused):
        run.run_group("g", "group", True, lambda: calls.append(1), policy)
    assert len(calls) == 2  # tried, repeated once, then refused
    marking = run.LoadPolicy(log=lambda text: None)  # default: mark, do not refuse
    group = run.run_group("g", "group", True, lambda: 7, marking)
    assert group["loaded"] and group["result"] == 7


def test_only_runs_the_groups_named():
    results = run.measure(
        startup_repeats=1,
        only=["startup"],
        worker=run.run_worker,
        policy=run.LoadPolicy(log=lambda text: None),
    )
    assert list(results["groups"]) == ["startup"] and results["meta"]["only"] == ["startup"]
    table = run.rows(results)
    assert table and all(row["item"].startswith("9 start-up") for row in table)
    assert "only the groups startup" in run.format_table(results, table)
    with pytest.raises(ValueError, match="unknown group"):
        run.measure(only=["nope"], worker=run.run_worker)
    with pytest.raises(SystemExit):
        run.parse_args(["--only", "startup,nope"])
    assert run.parse_args(["--only", "model_memory, probe"]).only == ["model_memory", "probe"]

"""graphaudit performance and scale: one command, one table, every ratio measured in one run, the load recorded.

Rows (targets from issue 14, "Near the floor"; ``met`` reports, nothing about timing is asserted):

1. structure-only audit (``audit(net, optimizer)``) of mindcv resnet50 / one PyNative forward
   pass (``1x3x224x224``, output read with ``.asnumpy()``), inference mode. Target <= 0.02x.
2. full audit (``audit(net, optimizer, inputs=x, loss_fn=nn.CrossEntropyLoss())``: capture,
   the traced pass and the loss traced on its output, every check) / forward pass, with the
   network in training mode (``set_train(True)``: BatchNorm writes its moving statistics,
   which the audit puts back) and in inference mode, both in one process, each against a
   forward pass in the same mode (``benchmarks/model.py``). Targets <= 1.2x (training),
   <= 1.1x (inference).
3. full audit + ``report.render("report.svg")`` / forward pass, both modes. Target <= 1.4x.
4. scaling on synthetic networks (stages of 100 ``Dense(4, 4)`` / activation cells: as many
   parameters as cells) of 1,000 / 10,000 / 50,000 cells: time and peak memory of the
   structure-only audit at each size / at the size before; and the same for the traced audit
   at 1,000 / 10,000 cells. Linear means ``time ratio / size ratio`` <= 1.2 (10x the size
   <= 12x the time). A traced pass costs about a millisecond per PyNative operation here, so
   a traced 50,000-cell pass (50,000 ops, timed several times) is left out.
5. rendering a structure-only audit of a 5,051-cell network (collapsed fallback above
   ``max_nodes``=1,500 drawn nodes) / the audit of that network; target: the drawing is
   bounded (<= 1,500 drawn nodes), whatever the size of the graph.
6. peak memory of a full audit / peak memory of a forward pass, each the rise of peak RSS
   (``VmHWM``) over the freshly built model in a fresh process, in training and in inference
   mode. Target <= 1.2x; and the rise of a full audit run after one forward pass in the same
   mode (what the audit adds to a process that already ran one), target <= 0.2x.
7. transformer LM (``benchmarks/transformer.py``: 12 layers, hidden 256, 1x64 tokens, tied
   head): tracing overhead per traced operation (``op`` + ``call`` node), in microseconds,
   graphaudit's traced capture / bare no-op wrappers on the same entry points, same run.
   Target <= 3x. Also: the traced capture / the forward pass (information).
8. LLaMA-7B-shaped network under ``no_init_parameters()`` (``benchmarks/llama.py``):
   structure-only ``audit(net)`` time / building the network, target <= 1x; its peak-RSS rise,
   target <= 16 MiB (the weights, 25 GiB, are never allocated); the invariants (weights still
   uninitialised, GA601-GA603 listed as not run with the reason) are checked: a broken one
   fails the run (exit code 1).
9. start-up (``benchmarks/startup.py``): ``graphaudit --help``, ``--version``, ``checks``
   wall time (subprocess) / ``python -c pass``; target < 0.5 s and MindSpore not imported.
10. the multi-step probe (``benchmarks/probe.py``): ``audit(..., probe=1)`` and ``probe=5`` of
    mindcv resnet18 (``2x3x64x64``, a label, ``CrossEntropyLoss``) / one real training step
    of the same network on the same batch (``TrainOneStepCell``), same run. Target
    ``probe=N`` <= N + 0.6 steps (N steps and one traced forward pass).
11. the dependency probe (``benchmarks/dependency.py``): its passes on mindcv resnet18
    (``2x3x64x64``, the batch probe) and on a GPT-style decoder (``2x64`` tokens, every probe)
    / one PyNative forward pass of the same batch. Target <= 2x (issue 26).

Every group of measurements runs in a fresh subprocess (memory: one process per
measurement). Within a group the phases are timed interleaved (forward, structure, full,
render, forward, ...), after one warm-up run of each, so a change of load hits every phase
alike; the table gives the ratio of the medians and the ratio of the minimums.

Load: before, during (every second) and after each group the 1-min load average is sampled,
and the CPU used by other processes is read from ``/proc/stat`` (minus the benchmark's own,
from ``getrusage``); both are printed with each group. A timed group during which other
processes used more than half of the usable cores (``sched_getaffinity``) is marked ``LOADED:
ratios unreliable`` (every row of it); only where ``/proc/stat`` cannot be read, the load
average minus the benchmark's own CPU use is judged instead (it cannot tell MindSpore's own
runnable threads from others'); see ``benchmarks.common.GroupLoad``. ``--max-load X`` refuses instead: it uses X as the threshold,
waits before each group until other processes use at most X/2 cores (``--max-wait`` seconds
at most), repeats a group that ran loaded (``--retries`` times) and stops with exit code 3 if
it still does.

Usage::

    python benchmarks/run.py [--quick] [--json PATH] [--max-load X] [--model resnet50] [--size 224] [--repeats 5]

Linux only (``/proc/self/status``, ``/proc/stat``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/run.py` without PYTHONPATH
    sys.path.insert(0, str(ROOT))

from benchmarks.common import LoadMonitor, others_cores_now, usable_cores  # noqa: E402

SIZES = [1_000, 10_000, 50_000]
TRACED_SIZES = [1_000, 10_000]
QUICK_SIZES = [200, 2_000, 10_000]
QUICK_TRACED_SIZES = [200, 2_000]
RENDER_STAGES, RENDER_WIDTH = 50, 100  # 5,051 cells
MAX_NODES = 1500  # graphaudit.draw's default
LINEAR_SLACK = 1.2  # 10x the size may take at most 12x the time / memory
LM = {"layers": 12, "hidden": 256, "heads": 4, "ffn": 1024, "seq": 64, "vocab": 2048}
LLAMA = {"layers": 32, "hidden": 4096, "ffn": 11008, "vocab": 32000}
TARGETS = {
    "structure": 0.02,
    "full:training": 1.2,
    "full+render:training": 1.4,
    "full:inference": 1.1,
    "full+render:inference": 1.4,
    "memory": 1.2,
    "warm_memory": 0.2,
    "per_op": 3.0,
    "lazy_time": 1.0,
    "lazy_mib": 16.0,
    "startup_s": 0.5,
    "probe_extra_steps": 0.6,  # probe=N <= N + 0.6 training steps: N steps and one traced forward pass
    "dependency": 2.0,
}
MODES = ("training", "inference")
EXIT_INVARIANT, EXIT_REFUSED = 1, 3


class Refused(SystemExit):
    """``--max-load``: the machine stayed too loaded to measure."""


# -- workers: one measurement each, in a fresh interpreter ------------------------------------
def run_worker(name: str, params: dict[str, Any]) -> Any:
    from benchmarks import dependency, llama, model, probe, scaling, startup, transformer

    workers: dict[str, Callable[..., Any]] = {
        "model-time": model.time_model,
        "model-memory": model.memory_model,
        "scale-time": scaling.time_scaling,
        "scale-memory": scaling.memory_scaling,
        "render-time": scaling.time_render,
        "transformer-time": transformer.time_transformer,
        "lazy-audit": llama.lazy_audit,
        "startup": startup.time_startup,
        "probe-time": probe.time_probe,
        "dependency-time": dependency.time_dependency,
    }
    return workers[name](**params)


def spawn(name: str, params: dict[str, Any], *, quiet: bool = False) -> Any:
    """Run one worker in a fresh interpreter and return its JSON result."""
    if not quiet:
        shown = ", ".join(f"{k}={v}" for k, v in params.items())
        print(f"  {name} ({shown}) ...", file=sys.stderr, flush=True)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    env.setdefault("GLOG_v", "3")  # MindSpore's C++ logging: errors only
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "result.json"
        command = [sys.executable, str(Path(__file__).resolve()), "--worker", name]
        command += ["--worker-params", json.dumps(params), "--worker-out", str(out)]
        proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
        if proc.returncode != 0 or not out.exists():
            sys.stderr.write(proc.stderr[-5000:])
            raise SystemExit(
                f"benchmark worker {name!r} failed (exit code {proc.returncode}); its stderr is above"
            )
        return json.loads(out.read_text())


# -- groups and their load ------------------------------------------------------------------------
@dataclass
class LoadPolicy:
    """Mark (default) or, with ``max_load``, refuse loaded groups; see the module docstring."""

    max_load: float | None = None
    max_wait: float = 600.0
    retries: int = 2
    cores: int = field(default_factory=usable_cores)
    sleep: Callable[[float], Any] = time.sleep
    log: Callable[[str], Any] = lambda text: print(text, file=sys.stderr, flush=True)

    @property
    def threshold(self) -> float:
        return float(self.cores) if self.max_load is None else self.max_load

    def wait_until_quiet(self, title: str) -> None:
        """With ``max_load``: wait until other processes use at most ``max_load / 2`` cores."""
        if self.max_load is None:
            return
        waited, limit = 0.0, self.max_load / 2
        while True:
            others = others_cores_now(3.0)
            if others is None or others <= limit:
                return
            if waited >= self.max_wait:
                raise Refused(
                    f"refused: before {title!r} other processes still used {others:.2f} cores "
                    f"(> {limit:g}) after {waited:.0f} s of waiting; run again on a quieter machine "
                    "or raise --max-load / --max-wait"
                )
            self.log(f"  waiting: other processes use {others:.2f} cores (> {limit:g}) ...")
            self.sleep(10.0)
            waited += 13.0


def run_group(
    key: str, title: str, timed: bool, body: Callable[[], Any], policy: LoadPolicy
) -> dict[str, Any]:
    """Run *body* under a :class:`~benchmarks.common.LoadMonitor`; retried / refused per *policy*."""
    for attempt in range(policy.retries + 1):
        policy.wait_until_quiet(title)
        with LoadMonitor() as load:
            result = body()
        reasons = load.reasons(policy.threshold) if timed else []
        group = {
            "key": key,
            "title": title,
            "timed": timed,
            "load": load.to_dict(),
            "loaded": bool(reasons),
            "reasons": reasons,
            "attempts": attempt + 1,
            "result": result,
        }
        policy.log(f"  {format_group(group)}")
        if not reasons or policy.max_load is None:
            return group
        policy.log(f"  repeating {title!r}: it ran loaded")
    raise Refused(
        f"refused: {title!r} ran loaded {policy.retries + 1} times ({'; '.join(reasons)}); "
        "run again on a quieter machine or raise --max-load"
    )


# -- the measurements ---------------------------------------------------------------------------
def measure(
    *,
    model: str = "resnet50",
    size: int = 224,
    repeats: int = 5,
    sizes: list[int] | None = None,
    traced_sizes: list[int] | None = None,
    scale_repeats: int = 3,
    render_stages: int = RENDER_STAGES,
    render_width: int = RENDER_WIDTH,
    lm: dict[str, int] | None = None,
    lm_repeats: int = 7,
    amplify: int = 101,
    llama: dict[str, int] | None = None,
    startup_repeats: int = 7,
    probe_model: str = "resnet18",
    probe_size: int = 64,
    probe_repeats: int = 3,
    probe_steps: int = 5,
    worker: Callable[[str, dict[str, Any]], Any] = spawn,
    policy: LoadPolicy | None = None,
) -> dict[str, Any]:
    """Every measurement of the table, by group; *worker* runs one (default: in a fresh subprocess)."""
    sizes = SIZES if sizes is None else sizes
    traced_sizes = TRACED_SIZES if traced_sizes is None else traced_sizes
    lm = LM if lm is None else lm
    llama = LLAMA if llama is None else llama
    policy = LoadPolicy() if policy is None else policy
    started = time.time()
    plan: list[tuple[str, str, bool, Callable[[], Any]]] = [
        (
            "model_time",
            f"{model} time",
            True,
            lambda: worker("model-time", {"model": model, "size": size, "repeats": repeats}),
        ),
        (
            "model_memory",
            f"{model} memory",
            False,
            lambda: {
                f"{phase}:{mode}": worker(
                    "model-memory", {"model": model, "size": size, "phase": phase, "mode": mode}
                )
                for mode in MODES
                for phase in ("forward", "full")
            },
        ),
        (
            "transformer",
            "transformer LM time",
            True,
            lambda: worker("transformer-time", {**lm, "repeats": lm_repeats, "amplify": amplify}),
        ),
        (
            "lazy",
            "LLaMA-shaped, no weights",
            True,
            lambda: worker("lazy-audit", {**llama, "repeats": repeats}),
        ),
        ("startup", "command-line start-up", True, lambda: worker("startup", {"repeats": startup_repeats})),
        (
            "probe",
            f"{probe_model} probe={probe_steps}",
            True,
            lambda: worker(
                "probe-time",
                {"model": probe_model, "size": probe_size, "repeats": probe_repeats, "steps": probe_steps},
            ),
        ),
        *(
            (
                f"dependency_{kind}",
                f"dependency probe ({kind})",
                True,
                lambda kind=kind: worker(
                    "dependency-time",
                    {"kind": kind, "size": probe_size, "repeats": probe_repeats, "model": probe_model},
                ),
            )
            for kind in ("cnn", "decoder")
        ),
        (
            "scale_time",
            "synthetic scaling time",
            True,
            lambda: worker(
                "scale-time", {"sizes": sizes, "traced_sizes": traced_sizes, "repeats": scale_repeats}
            ),
        ),
        (
            "scale_memory",
            "synthetic scaling memory",
            False,
            lambda: (
                [worker("scale-memory", {"cells": c, "traced": False}) for c in sizes]
                + [worker("scale-memory", {"cells": c, "traced": True}) for c in traced_sizes]
            ),
        ),
        (
            "render",
            "large render",
            True,
            lambda: worker(
                "render-time", {"stages": render_stages, "width": render_width, "repeats": scale_repeats}
            ),
        ),
    ]
    results: dict[str, Any] = {"groups": {}}
    for key, title, timed, body in plan:
        group = run_group(key, title, timed, body, policy)
        results[key] = group.pop("result")
        results["groups"][key] = group
    import mindspore as ms

    results["meta"] = {
        "model": model,
        "input_shape": [1, 3, size, size],
        "repeats": repeats,
        "scale_repeats": scale_repeats,
        "lm_repeats": lm_repeats,
        "startup_repeats": startup_repeats,
        "sizes": sizes,
        "traced_sizes": traced_sizes,
        "mindspore_version": ms.__version__,
        "python_version": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable_cores(),
        "load_threshold": policy.threshold,
        "refusing": policy.max_load is not None,
        "load_average_at_end": list(os.getloadavg()),
        "wall_seconds": time.time() - started,
    }
    return results


# -- the table ----------------------------------------------------------------------------------
def _ratio(value: float | None, baseline: float | None) -> float | None:
    if value is None or baseline is None or baseline <= 0:
        return None
    return value / baseline


def _row(
    item: str,
    group: str,
    unit: str,
    value: tuple[float | None, float | None],
    baseline_name: str,
    baseline: tuple[float | None, float | None],
    limit: float | None = None,
    *,
    on: str = "ratio",
    note: str = "",
    met: bool | None = None,
    missed_by: str | None = None,
) -> dict[str, Any]:
    """One row. *limit* applies to the median ratio (``on="ratio"``) or the median value (``"value"``)."""
    ratio = _ratio(value[0], baseline[0])
    ratio_min = _ratio(value[1], baseline[1])
    target = None
    if limit is not None:
        target = f"<= {limit:g}x" if on == "ratio" else f"<= {limit:g} {unit}"
        judged = ratio if on == "ratio" else value[0]
        if judged is not None:
            within = judged <= limit
            met = within if met is None else (met and within)
            if not within and missed_by is None:
                missed_by = f"+{(judged / limit - 1) * 100:.0f}%"
    return {
        "item": item,
        "group": group,
        "unit": unit,
        "median": value[0],
        "min": value[1],
        "baseline": baseline_name,
        "baseline_median": baseline[0],
        "baseline_min": baseline[1],
        "ratio": ratio,
        "ratio_min": ratio_min,
        "target": target,
        "met": met,
        "missed_by": missed_by,
        "note": note,
    }


def _med_min(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), min(times)


def _phase(phases: dict[str, Any], name: str) -> tuple[float, float]:
    return phases[name]["median_s"], phases[name]["min_s"]


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the table, computed from :func:`measure`'s results."""
    out: list[dict[str, Any]] = []
    model = results["meta"]["model"]
    mt = results["model_time"]
    seconds = mt["seconds"]
    forward = _med_min(seconds["forward:inference"])
    out.append(
        _row(
            f"1 {model} structure-only audit",
            "model_time",
            "s",
            _med_min(seconds["structure"]),
            f"{model} forward, inference",
            forward,
            TARGETS["structure"],
        )
    )
    for mode in mt["modes"]:
        forward = _med_min(seconds[f"forward:{mode}"])
        fwd_name = f"{model} forward, {mode}"
        out.append(
            _row(
                f"2 {model} full audit, {mode} mode",
                "model_time",
                "s",
                _med_min(seconds[f"full:{mode}"]),
                fwd_name,
                forward,
                TARGETS[f"full:{mode}"],
                note="audit(net, optimizer, inputs=x, loss_fn=nn.CrossEntropyLoss()), net.set_train("
                f"{mode == 'training'})",
            )
        )
        out.append(
            _row(
                f"3 {model} full audit + SVG, {mode} mode",
                "model_time",
                "s",
                _med_min(seconds[f"full+render:{mode}"]),
                fwd_name,
                forward,
                TARGETS[f"full+render:{mode}"],
                note=f"render alone {statistics.median(seconds[f'render:{mode}']):.2f} s, "
                f"{mt['graph_nodes'][mode]} graph nodes",
            )
        )

    st = results["scale_time"]
    phases = st["phases"]
    cells = {int(k): v for k, v in st["cells"].items()}
    params = {int(k): v for k, v in st["params"].items()}
    sizes = results["meta"]["sizes"]
    traced_sizes = results["meta"]["traced_sizes"]
    memory = {(m["cells"], m["traced"]): m["peak_rise_mib"] for m in results["scale_memory"]}
    for label, kind, group in (("structure", "structure", sizes), ("traced", "full", traced_sizes)):
        for small, large in zip(group, group[1:]):
            growth = cells[large] / cells[small]
            limit = round(LINEAR_SLACK * growth, 2)
            span = f"{cells[small]:,} -> {cells[large]:,} cells"
            out.append(
                _row(
                    f"4 {label} audit time, {span}",
                    "scale_time",
                    "s",
                    _phase(phases, f"{kind}:{large}"),
                    f"{cells[small]:,} cells",
                    _phase(phases, f"{kind}:{small}"),
                    limit,
                    note=f"size x{growth:.2f}; params {params[small]:,} -> {params[large]:,}",
                )
            )
            out.append(
                _row(
                    f"4 {label} audit peak memory, {span}",
                    "scale_memory",
                    "MiB",
                    (memory[(large, label == "traced")], None),
                    f"{cells[small]:,} cells",
                    (memory[(small, label == "traced")], None),
                    limit,
                    note=f"size x{growth:.2f}",
                )
            )
    for n in traced_sizes:
        out.append(
            _row(
                f"4 traced audit vs forward, {cells[n]:,} cells",
                "scale_time",
                "s",
                _phase(phases, f"full:{n}"),
                f"forward {cells[n]:,} cells",
                _phase(phases, f"forward:{n}"),
                note="information: tracing cost on a network of tiny cells",
            )
        )

    r = results["render"]
    out.append(
        _row(
            f"5 render {r['cells']:,} cells (fallback)",
            "render",
            "s",
            _phase(r["phases"], "render"),
            f"audit {r['cells']:,} cells",
            _phase(r["phases"], "audit"),
            met=r["drawn"] <= MAX_NODES,
            note=f"{r['graph_nodes']:,} graph nodes drawn as {r['drawn']} at depth {r['depth']} (target: <= {MAX_NODES})",
        )
    )

    mem = results["model_memory"]
    for mode in MODES:
        fwd_mib = mem[f"forward:{mode}"]["peak_rise_mib"]
        full_mem = mem[f"full:{mode}"]
        out.append(
            _row(
                f"6 {model} full audit peak memory, {mode}",
                "model_memory",
                "MiB",
                (full_mem["peak_rise_mib"], None),
                f"{model} forward, {mode}",
                (fwd_mib, None),
                TARGETS["memory"],
                note="fresh process each: peak RSS rise over the built model (graphaudit's modules imported "
                f"before: {full_mem.get('import_mib', 0):.1f} MiB once per process, not counted)",
            )
        )
        out.append(
            _row(
                f"6 {model} full audit after a forward, {mode}",
                "model_memory",
                "MiB",
                (mem[f"forward:{mode}"]["warm_full_mib"], None),
                f"{model} forward, {mode}",
                (fwd_mib, None),
                TARGETS["warm_memory"],
                note="extra peak RSS of the audit in a process that already ran the forward pass",
            )
        )

    out.extend(_transformer_rows(results["transformer"]))
    out.extend(_lazy_rows(results["lazy"]))
    out.extend(_startup_rows(results["startup"]))
    if "probe" in results:
        out.extend(_probe_rows(results["probe"]))
    for kind in ("cnn", "decoder"):
        if f"dependency_{kind}" in results:
            out.append(_dependency_row(results[f"dependency_{kind}"]))
    return out


def _dependency_row(d: dict[str, Any]) -> dict[str, Any]:
    seconds = d["seconds"]
    return _row(
        f"11 dependency probe, {d['model']}",
        f"dependency_{d['kind']}",
        "s",
        _med_min(seconds["dependency probe"]),
        "forward pass (inference)",
        _med_min(seconds["forward"]),
        TARGETS["dependency"],
        note=f"{d['passes']} passes; found: {', '.join(d['found'] or []) or 'nothing'}"
        + (f"; failed: {d['failure']}" if d.get("failure") else ""),
    )


def _probe_rows(p: dict[str, Any]) -> list[dict[str, Any]]:
    seconds = p["seconds"]
    step = _med_min(seconds["training step"])
    name = f"{p['model']} training step"
    return [
        _row(
            f"10 {p['model']} audit with probe={steps}",
            "probe",
            "s",
            _med_min(seconds[f"probe={steps}"]),
            name,
            step,
            round(steps + TARGETS["probe_extra_steps"], 2),
            note="the cost in training steps of the same batch: N steps and one traced forward pass "
            f"(full audit without a probe {statistics.median(seconds['full audit']):.2f} s)",
        )
        for steps in (1, p["steps"])
    ]


def _transformer_rows(t: dict[str, Any]) -> list[dict[str, Any]]:
    c = t["config"]
    shape = f"{c['layers']} layers, hidden {c['hidden']}, 1x{c['seq']} tokens"
    per_op = t["per_op"]
    bare_ok = per_op["median"]["bare_us"] > 0
    notes = [
        f"{shape}: {t['traced_nodes']} traced ops ({t['nodes'].get('op', 0)} op + {t['nodes'].get('call', 0)} "
        f"call nodes), {t['wrapper_calls']} wrapper calls a pass",
        f"bare = one more no-op wrapper layer (x{c['amplify']} nested / 1, per node); "
        f"bare - forward directly: {per_op['median']['bare_direct_us']:.1f} / {per_op['min']['bare_direct_us']:.1f} us",
        f"installing + removing the bare wrappers {t['phases']['install']['median_s'] * 1e3:.1f} ms (not in 'bare'); "
        f"structure-only capture {t['phases']['structure']['median_s'] * 1e3:.1f} ms (in 'traced')",
    ]
    if not bare_ok:
        notes.append("the bare wrapper's overhead is below the noise of this run: no ratio")
    rows_ = [
        _row(
            "7 LM tracing overhead per traced op",
            "transformer",
            "us",
            (per_op["median"]["graphaudit_us"], per_op["min"]["graphaudit_us"]),
            "bare no-op wrapper",
            (
                per_op["median"]["bare_us"] if bare_ok else None,
                per_op["min"]["bare_us"] if per_op["min"]["bare_us"] > 0 else None,
            ),
            TARGETS["per_op"],
            note="\n".join(notes),
        ),
        _row(
            "7 LM traced capture vs forward",
            "transformer",
            "s",
            _phase(t["phases"], "traced"),
            "LM forward",
            _phase(t["phases"], "forward"),
            note="information: to_networkx(net, inputs=ids) / net(ids).asnumpy()",
        ),
    ]
    return rows_


def _lazy_rows(lz: dict[str, Any]) -> list[dict[str, Any]]:
    inv = lz["invariants"]
    c = lz["config"]
    holds = inv["weights_uninitialised"] and inv["value_checks_not_run"]
    shape = f"{c['layers']} layers, hidden {c['hidden']}, FFN {c['ffn']}, vocab {c['vocab']}"
    verdict = (
        f"invariants: weights still uninitialised ({inv['parameters']} parameters has_init): "
        f"{'yes' if inv['weights_uninitialised'] else 'NO'}; GA601-GA603 not run, reason 'not initialised': "
        f"{'yes' if inv['value_checks_not_run'] else 'NO'}"
    )
    return [
        _row(
            "8 LLaMA-shaped structure-only audit",
            "lazy",
            "s",
            _phase(lz["phases"], "audit"),
            "building it",
            _phase(lz["phases"], "build"),
            TARGETS["lazy_time"],
            met=holds,
            missed_by=None if holds else "invariant broken",
            note=f"{shape}: {lz['elements'] / 1e9:.2f} G elements, {lz['cells']} cells; "
            f"first audit in the process {lz['first_audit_s']:.3f} s\n{verdict}",
        ),
        _row(
            "8 LLaMA-shaped audit peak memory",
            "lazy",
            "MiB",
            (lz["audit_mib"], None),
            "building it",
            (lz["build_mib"], None),
            TARGETS["lazy_mib"],
            on="value",
            met=holds,
            missed_by=None if holds else "invariant broken",
            note="peak RSS rise of the first audit (the weights would be 25 GiB)",
        ),
    ]


def _startup_rows(s: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    baseline = _phase(s["phases"], "python -c pass")
    for name, checked in s["imports"].items():
        clean = not checked["mindspore_imported"] and s["exit_codes"].get(name) == 0
        failure = "imports mindspore" if checked["mindspore_imported"] else "failed"
        slowest = ", ".join(f"{m} {us / 1e3:.0f} ms" for m, us in checked["slowest"][:3])
        out.append(
            _row(
                f"9 start-up: graphaudit {name}",
                "startup",
                "s",
                _phase(s["phases"], name),
                "python -c pass",
                baseline,
                TARGETS["startup_s"],
                on="value",
                met=clean,
                missed_by=None if clean else failure,
                note=f"mindspore imported: {'YES' if checked['mindspore_imported'] else 'no'}; "
                f"{checked['modules']} modules; slowest imports: {slowest}",
            )
        )
    return out


def invariants_hold(results: dict[str, Any]) -> bool:
    inv = results["lazy"]["invariants"]
    return bool(inv["weights_uninitialised"] and inv["value_checks_not_run"])


def format_group(group: dict[str, Any]) -> str:
    load = group["load"]
    before = ", ".join(f"{v:.2f}" for v in load["load_before"])
    after = ", ".join(f"{v:.2f}" for v in load["load_after"])
    others = "?" if load["others_cores"] is None else f"{load['others_cores']:.2f}"
    if not group["timed"]:
        verdict = "memory only: load does not change it"
    elif group["loaded"]:
        verdict = f"LOADED: ratios unreliable ({'; '.join(group['reasons'])})"
    else:
        verdict = "quiet enough"
    retried = f", attempt {group['attempts']}" if group["attempts"] > 1 else ""
    return (
        f"[{group['title']}] {load['wall_s']:.0f} s{retried}; load average (1/5/15 min) before {before}, "
        f"after {after}, max {load['load_max']:.2f} on {load['cores']} cores; CPU used by others "
        f"{others} cores, by the benchmark {load['own_cores']:.2f}: {verdict}"
    )


def format_table(results: dict[str, Any], table: list[dict[str, Any]]) -> str:
    def num(value: float | None, unit: str) -> str:
        if value is None:
            return "-"
        spec = {"s": ".3f", "MiB": ".1f", "us": ".1f"}[unit]
        return format(value, spec)

    def pair(a: float | None, b: float | None, unit: str, suffix: str = "") -> str:
        text = num(a, unit) + suffix
        return text if b is None else f"{text} / {num(b, unit)}{suffix}"

    def ratio(a: float | None, b: float | None) -> str:
        fa = "-" if a is None else f"{a:.3f}x"
        return fa if b is None else f"{fa} / {b:.3f}x"

    meta = results["meta"]
    groups = results["groups"]
    loaded = [g["title"] for g in groups.values() if g["loaded"]]
    header = (
        f"{'measurement':<44} {'measured med / min':>22} {'baseline':<22} {'baseline med / min':>20} "
        f"{'ratio med / min':>19} {'target':>11}  met"
    )
    lines = [
        f"graphaudit performance: {meta['model']} input {tuple(meta['input_shape'])}, medians / minimums of "
        f"{meta['repeats']} (model), {meta['lm_repeats']} (LM), {meta['scale_repeats']} (synthetic) interleaved "
        f"runs; mindspore {meta['mindspore_version']}, python {meta['python_version']}, {meta['usable_cores']} "
        f"usable cores ({meta['cpu_count']} CPUs); {meta['wall_seconds']:.0f} s in all",
        "load: "
        + (
            f"{len(loaded)} of {sum(g['timed'] for g in groups.values())} timed groups LOADED "
            f"(threshold {meta['load_threshold']:g}): their ratios are unreliable"
            if loaded
            else f"every timed group ran below the threshold ({meta['load_threshold']:g})"
        ),
        header,
        "-" * len(header),
    ]
    order = list(dict.fromkeys(row["group"] for row in table))  # each group's rows together, in order
    current = None
    for row in sorted(table, key=lambda row: order.index(row["group"])):
        if row["group"] != current:
            current = row["group"]
            lines.append(format_group(groups[current]))
        unit = row["unit"]
        suffix = {"s": "s", "MiB": "M", "us": "us"}[unit]
        met = {True: "yes", False: "NO", None: ""}[row["met"]]
        if row["met"] is False and row["missed_by"]:
            met += f" {row['missed_by']}"
        if groups[row["group"]]["loaded"]:
            met += " LOADED"
        lines.append(
            f"{row['item']:<44} {pair(row['median'], row['min'], unit, suffix):>22} {row['baseline']:<22} "
            f"{pair(row['baseline_median'], row['baseline_min'], unit):>20} "
            f"{ratio(row['ratio'], row['ratio_min']):>19} {row['target'] or '':>11}  {met}".rstrip()
        )
        for note in filter(None, row["note"].split("\n")):
            lines.append(f"{'':<4}{note}")
    lines.append(
        "units: s = seconds, M = MiB (peak RSS rise), us = microseconds; ratio = measured / baseline "
        "(of the medians, and of the minimums); met: the median against the target, NO +n% = missed by n%"
    )
    memory = [*results["scale_memory"], *results["model_memory"].values()]
    if not all(m["peak_reset"] for m in memory) or not results["lazy"]["peak_reset"]:
        lines.append("note: VmHWM could not be reset; memory is the growth over earlier peaks")
    if not invariants_hold(results):
        lines.append(
            "INVARIANT BROKEN: the LLaMA-shaped audit initialised weights or ran GA601-GA603 (row 8)"
        )
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (a smoke run)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every measurement as JSON here")
    parser.add_argument("--model", default="resnet50", help="mindcv model name (default: resnet50)")
    parser.add_argument("--size", type=int, default=224, help="input height and width (default: 224)")
    parser.add_argument("--repeats", type=int, help="timed runs of each model phase (default: 5, --quick: 1)")
    parser.add_argument(
        "--max-load",
        type=float,
        metavar="X",
        help="refuse to measure under load: X is the threshold (default: only mark loaded groups, "
        "against the number of usable cores)",
    )
    parser.add_argument(
        "--max-wait",
        type=float,
        default=600.0,
        help="with --max-load: seconds to wait for quiet (default 600)",
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        help="with --max-load: repeats of a group that ran loaded (default 2)",
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-params", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be positive")
    if args.max_load is not None and args.max_load <= 0:
        parser.error("--max-load must be positive")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker:  # hidden: one measurement, in a subprocess started by spawn()
        result = run_worker(args.worker, json.loads(args.worker_params))
        args.worker_out.write_text(json.dumps(result))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip interpreter teardown and MindSpore's noisy Cell.__del__ messages

    repeats = args.repeats or (1 if args.quick else 5)
    print("graphaudit benchmarks: every measurement in a fresh subprocess", file=sys.stderr, flush=True)
    policy = LoadPolicy(max_load=args.max_load, max_wait=args.max_wait, retries=args.retries)
    try:
        results = measure(
            model=args.model,
            size=args.size,
            repeats=repeats,
            sizes=QUICK_SIZES if args.quick else SIZES,
            traced_sizes=QUICK_TRACED_SIZES if args.quick else TRACED_SIZES,
            scale_repeats=2 if args.quick else 3,
            lm_repeats=3 if args.quick else 7,
            startup_repeats=3 if args.quick else 7,
            policy=policy,
        )
    except Refused as refused:
        print(refused.code, file=sys.stderr)
        raise SystemExit(EXIT_REFUSED) from None
    results["meta"]["quick"] = args.quick
    table = rows(results)
    print(format_table(results, table))
    if args.json:
        args.json.write_text(json.dumps({"results": results, "table": table}, indent=2) + "\n")
        print(f"results written to {args.json}")
    if not invariants_hold(results):
        raise SystemExit(EXIT_INVARIANT)


if __name__ == "__main__":
    main()

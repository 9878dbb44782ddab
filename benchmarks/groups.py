"""The benchmark's groups: each measurement in a fresh interpreter, each group under a load monitor.

``measure`` runs the plan of groups (see ``benchmarks/run.py``'s docstring for what each
measures); ``run_group`` marks, waits for quiet, repeats or refuses a group by its load.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import torchview_anchor
from benchmarks.common import LoadMonitor, cpu_model, others_cores_now, usable_cores
from benchmarks.settings import LLAMA, LM, MODES, RENDER_STAGES, RENDER_WIDTH, SIZES, TRACED_SIZES

ROOT = Path(__file__).resolve().parent.parent
RUN = Path(__file__).resolve().with_name("run.py")  # its hidden --worker runs one measurement


#: The keys of the groups, in the order they run (``run.py --only KEY[,KEY...]`` runs a few of them).
GROUPS = (
    "model_time",
    "model_memory",
    "transformer",
    "lazy",
    "startup",
    "probe",
    "dependency_cnn",
    "dependency_decoder",
    "reference_time",
    "reference_memory",
    "watch_time",
    "watch_graph",
    "watch_memory",
    "watch_msrun",
    "scale_time",
    "scale_memory",
    "render",
    "anchor",
)


class Refused(SystemExit):
    """``--max-load``: the machine stayed too loaded to measure."""


# -- workers: one measurement each, in a fresh interpreter ------------------------------------
def run_worker(name: str, params: dict[str, Any]) -> Any:
    from benchmarks import (
        dependency,
        llama,
        model,
        probe,
        reference,
        scaling,
        startup,
        transformer,
        watch,
        watch_msrun,
    )

    workers: dict[str, Callable[..., Any]] = {
        "model-time": model.time_model,
        "model-memory": model.memory_model,
        "model-memory-parts": model.memory_parts,
        "scale-time": scaling.time_scaling,
        "scale-memory": scaling.memory_scaling,
        "render-time": scaling.time_render,
        "transformer-time": transformer.time_transformer,
        "lazy-audit": llama.lazy_audit,
        "startup": startup.time_startup,
        "probe-time": probe.time_probe,
        "dependency-time": dependency.time_dependency,
        "reference-time": reference.time_reference,
        "reference-memory": reference.memory_reference,
        "watch-time": watch.timed,
        "watch-memory": watch.memory,
        "watch-msrun-time": watch_msrun.timed,
        "torchview-time": torchview_anchor.time_torchview,
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
        command = [sys.executable, str(RUN), "--worker", name]
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
    dependency_size: int = 224,
    dependency_repeats: int = 9,
    reference_repeats: int = 5,
    reference_batches: tuple[int, ...] = (1, 4),
    watch_steps: int = 100,
    watch_size: int = 32,
    watch_repeats: int = 3,
    watch_graph_repeats: int = 3,
    watch_msrun_steps: int = 200,
    watch_msrun_repeats: int = 5,
    torch_python: str | None = None,
    anchor_repeats: int = 5,
    worker: Callable[[str, dict[str, Any]], Any] = spawn,
    policy: LoadPolicy | None = None,
    only: Collection[str] | None = None,
) -> dict[str, Any]:
    """Every measurement of the table, by group; *worker* runs one (default: in a fresh subprocess).

    With *only* (keys of :data:`GROUPS`), just those groups run; the table then has their rows.
    """
    sizes = SIZES if sizes is None else sizes
    traced_sizes = TRACED_SIZES if traced_sizes is None else traced_sizes
    lm = LM if lm is None else lm
    llama = LLAMA if llama is None else llama
    policy = LoadPolicy() if policy is None else policy
    started = time.time()
    watch_params = {"steps": watch_steps, "size": watch_size}
    anchor_python, anchor_skipped = torchview_anchor.find_torch_python(torch_python)
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
                **{
                    f"{phase}:{mode}": worker(
                        "model-memory", {"model": model, "size": size, "phase": phase, "mode": mode}
                    )
                    for mode in MODES
                    for phase in ("forward", "full")
                },
                **{
                    f"{kind}:{mode}": worker(
                        "model-memory-parts",
                        {"model": model, "size": size, "mode": mode, "python_peak": kind == "python"},
                    )
                    for mode in MODES
                    for kind in ("parts", "python")
                },
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
                    {
                        "kind": kind,
                        "size": dependency_size,
                        "repeats": dependency_repeats,
                        "model": probe_model,
                    },
                ),
            )
            for kind in ("cnn", "decoder")
        ),
        (
            "reference_time",
            "reference= time",
            True,
            lambda: {
                route: worker(
                    "reference-time",
                    {
                        "route": route,
                        "repeats": reference_repeats,
                        "model": probe_model,
                        "size": dependency_size,
                    },
                )
                for route in ("dump", "onnx")
            },
        ),
        (
            "reference_memory",
            "reference= memory",
            False,
            lambda: [
                worker(
                    "reference-memory",
                    {"phase": phase, "model": probe_model, "size": dependency_size, "batch": batch},
                )
                for batch in reference_batches
                for phase in ("plain", "reference")
            ],
        ),
        (
            "watch_time",
            "Model.train with Watch()",
            True,
            lambda: worker("watch-time", {**watch_params, "repeats": watch_repeats}),
        ),
        (
            "watch_graph",
            "Model.train in GRAPH_MODE with Watch()",
            True,
            lambda: (
                worker("watch-time", {**watch_params, "repeats": watch_graph_repeats, "mode": "graph"})
                if watch_graph_repeats
                else {"skipped": "not measured (watch_graph_repeats=0): it compiles resnet18's train step"}
            ),
        ),
        (
            "watch_memory",
            "Model.train with Watch() memory",
            False,
            lambda: {
                kind: worker("watch-memory", {**watch_params, "watched": kind == "watched"})
                for kind in ("plain", "watched")
            },
        ),
        (
            "watch_msrun",
            "Model.train under msrun with Watch()",
            True,
            lambda: (
                worker("watch-msrun-time", {"steps": watch_msrun_steps, "repeats": watch_msrun_repeats})
                if watch_msrun_repeats
                else {"skipped": "not measured (watch_msrun_repeats=0): it launches a 2-rank msrun job"}
            ),
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
        (
            "anchor",
            "torchview anchor",
            True,
            lambda: (
                worker("torchview-time", {"python": anchor_python, "repeats": anchor_repeats, "size": size})
                if anchor_python
                else {"skipped": anchor_skipped}
            ),
        ),
    ]
    assert tuple(entry[0] for entry in plan) == GROUPS, "GROUPS lists the plan's keys"
    if only is not None:
        unknown = sorted(set(only) - set(GROUPS))
        if unknown:
            raise ValueError(f"unknown group(s) {', '.join(unknown)}; the groups are: {', '.join(GROUPS)}")
        plan = [entry for entry in plan if entry[0] in only]
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
        "watch_steps": watch_steps,
        "watch_repeats": watch_repeats,
        "watch_graph_repeats": watch_graph_repeats,
        "watch_msrun_steps": watch_msrun_steps,
        "watch_msrun_repeats": watch_msrun_repeats,
        "sizes": sizes,
        "traced_sizes": traced_sizes,
        "mindspore_version": ms.__version__,
        "python_version": platform.python_version(),
        "machine": platform.machine(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "usable_cores": usable_cores(),
        "load_threshold": policy.threshold,
        "refusing": policy.max_load is not None,
        "load_average_at_end": list(os.getloadavg()),
        "only": None if only is None else list(only),
        "wall_seconds": time.time() - started,
    }
    return results


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

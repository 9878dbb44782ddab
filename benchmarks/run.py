"""graphaudit performance and scale: one command, one table of ratios measured in one run.

Every number is a ratio against a baseline measured in the same run, on the same machine:

1. structure-only audit (``audit(net, optimizer)``) of mindcv resnet50 / one PyNative forward
   pass (``1x3x224x224``, output read with ``.asnumpy()``). Target <= 0.05x.
2. full audit (``audit(net, optimizer, inputs=x)``: capture, traced pass, every check) /
   forward pass. Target <= 1.5x.
3. full audit + ``report.render("report.svg")`` / forward pass. Target <= 2.5x.
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
   (``VmHWM``) over the freshly built model in a fresh process. Target <= 1.2x (the audit
   needs at most 20% more than the forward pass itself); also shown: the rise of a full
   audit run after one forward pass (what the audit adds to a process that already ran one).

Time is timed interleaved inside one process per group (forward, structure, full, render,
forward, structure...), so a change of load on the machine hits every phase alike; the
table gives the ratio of the medians and the ratio of the minimums, and the load average.
Every measurement runs in a fresh subprocess; memory in a subprocess of its own.

Usage::

    python benchmarks/run.py [--quick] [--json PATH] [--model resnet50] [--size 224] [--repeats 3]

Linux only (``/proc/self/status``). Nothing is asserted; ``met`` only reports.
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
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/run.py` without PYTHONPATH
    sys.path.insert(0, str(ROOT))

SIZES = [1_000, 10_000, 50_000]
TRACED_SIZES = [1_000, 10_000]
QUICK_SIZES = [200, 2_000, 10_000]
QUICK_TRACED_SIZES = [200, 2_000]
RENDER_STAGES, RENDER_WIDTH = 50, 100  # 5,051 cells
MAX_NODES = 1500  # graphaudit.draw's default
LINEAR_SLACK = 1.2  # 10x the size may take at most 12x the time / memory


# -- workers: one measurement each, in a fresh interpreter ------------------------------------
def run_worker(name: str, params: dict[str, Any]) -> Any:
    from benchmarks import model, scaling

    workers: dict[str, Callable[..., Any]] = {
        "model-time": model.time_model,
        "model-memory": model.memory_model,
        "scale-time": scaling.time_scaling,
        "scale-memory": scaling.memory_scaling,
        "render-time": scaling.time_render,
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


# -- the measurements ---------------------------------------------------------------------------
def measure(
    *,
    model: str = "resnet50",
    size: int = 224,
    repeats: int = 3,
    sizes: list[int] | None = None,
    traced_sizes: list[int] | None = None,
    scale_repeats: int = 3,
    render_stages: int = RENDER_STAGES,
    render_width: int = RENDER_WIDTH,
    worker: Callable[[str, dict[str, Any]], Any] = spawn,
) -> dict[str, Any]:
    """Every measurement of the table; *worker* runs one (default: in a fresh subprocess)."""
    sizes = SIZES if sizes is None else sizes
    traced_sizes = TRACED_SIZES if traced_sizes is None else traced_sizes
    started = time.time()
    results: dict[str, Any] = {
        "model_time": worker("model-time", {"model": model, "size": size, "repeats": repeats}),
        "model_memory": {
            phase: worker("model-memory", {"model": model, "size": size, "phase": phase})
            for phase in ("forward", "full")
        },
        "scale_time": worker(
            "scale-time", {"sizes": sizes, "traced_sizes": traced_sizes, "repeats": scale_repeats}
        ),
        "scale_memory": [worker("scale-memory", {"cells": cells, "traced": False}) for cells in sizes]
        + [worker("scale-memory", {"cells": cells, "traced": True}) for cells in traced_sizes],
        "render": worker(
            "render-time", {"stages": render_stages, "width": render_width, "repeats": scale_repeats}
        ),
    }
    import mindspore as ms

    results["meta"] = {
        "model": model,
        "input_shape": [1, 3, size, size],
        "repeats": repeats,
        "scale_repeats": scale_repeats,
        "sizes": sizes,
        "traced_sizes": traced_sizes,
        "mindspore_version": ms.__version__,
        "python_version": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
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
    unit: str,
    value: tuple[float, float | None],
    baseline_name: str,
    baseline: tuple[float, float | None],
    limit: float | None,
    *,
    note: str = "",
    met: bool | None = None,
) -> dict[str, Any]:
    ratio = _ratio(value[0], baseline[0])
    ratio_min = _ratio(value[1], baseline[1])
    if met is None and limit is not None and ratio is not None:
        met = ratio <= limit
    return {
        "item": item,
        "unit": unit,
        "median": value[0],
        "min": value[1],
        "baseline": baseline_name,
        "baseline_median": baseline[0],
        "baseline_min": baseline[1],
        "ratio": ratio,
        "ratio_min": ratio_min,
        "target": None if limit is None else f"<= {limit:g}x",
        "met": met,
        "note": note,
    }


def _med_min(times: list[float]) -> tuple[float, float]:
    return statistics.median(times), min(times)


def rows(results: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the table, computed from :func:`measure`'s results."""
    out: list[dict[str, Any]] = []
    model = results["meta"]["model"]
    mt = results["model_time"]
    seconds = mt["seconds"]
    forward = _med_min(seconds["forward"])
    fwd_name = f"{model} forward"
    out.append(
        _row(f"1 {model} structure-only audit", "s", _med_min(seconds["structure"]), fwd_name, forward, 0.05)
    )
    out.append(_row(f"2 {model} full audit (inputs)", "s", _med_min(seconds["full"]), fwd_name, forward, 1.5))
    out.append(
        _row(
            f"3 {model} full audit + SVG render",
            "s",
            _med_min(seconds["full+render"]),
            fwd_name,
            forward,
            2.5,
            note=f"render alone {statistics.median(seconds['render']):.2f} s, {mt['graph_nodes']} graph nodes",
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
                    "s",
                    _med_min(phases[f"{kind}:{large}"]["seconds"]),
                    f"{cells[small]:,} cells",
                    _med_min(phases[f"{kind}:{small}"]["seconds"]),
                    limit,
                    note=f"size x{growth:.2f}; params {params[small]:,} -> {params[large]:,}",
                )
            )
            out.append(
                _row(
                    f"4 {label} audit peak memory, {span}",
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
                "s",
                _med_min(phases[f"full:{n}"]["seconds"]),
                f"forward {cells[n]:,} cells",
                _med_min(phases[f"forward:{n}"]["seconds"]),
                None,
                note="information: tracing cost per PyNative op",
            )
        )

    r = results["render"]
    out.append(
        _row(
            f"5 render {r['cells']:,} cells (fallback)",
            "s",
            _med_min(r["phases"]["render"]["seconds"]),
            f"audit {r['cells']:,} cells",
            _med_min(r["phases"]["audit"]["seconds"]),
            None,
            met=r["drawn"] <= MAX_NODES,
            note=f"{r['graph_nodes']:,} graph nodes drawn as {r['drawn']} at depth {r['depth']} (target: <= {MAX_NODES})",
        )
    )

    mem = results["model_memory"]
    fwd_mib = mem["forward"]["peak_rise_mib"]
    out.append(
        _row(
            f"6 {model} full audit peak memory",
            "MiB",
            (mem["full"]["peak_rise_mib"], None),
            f"{model} forward",
            (fwd_mib, None),
            1.2,
            note="fresh process each: peak RSS rise over the built model",
        )
    )
    out.append(
        _row(
            f"6 {model} full audit after a forward pass",
            "MiB",
            (mem["forward"]["warm_full_mib"], None),
            f"{model} forward",
            (fwd_mib, None),
            0.2,
            note="extra peak RSS of the audit in a process that already ran the forward pass",
        )
    )
    return out


def format_table(results: dict[str, Any], table: list[dict[str, Any]]) -> str:
    def num(value: float | None, spec: str) -> str:
        return "-" if value is None else format(value, spec)

    meta = results["meta"]
    load = ", ".join(f"{v:.1f}" for v in meta["load_average_at_end"])
    header = (
        f"{'measurement':<48} {'median':>9} {'min':>9} {'baseline':<20} {'median':>9} {'min':>9} "
        f"{'ratio':>8} {'ratio(min)':>10} {'target':>9} {'met':>4}"
    )
    lines = [
        f"graphaudit performance: {meta['model']} input {tuple(meta['input_shape'])}, median/min of "
        f"{meta['repeats']} (model) and {meta['scale_repeats']} (synthetic) interleaved runs; mindspore "
        f"{meta['mindspore_version']}, python {meta['python_version']}, {meta['cpu_count']} CPUs; "
        f"load average at the end (1/5/15 min): {load}; {meta['wall_seconds']:.0f} s in all",
        header,
        "-" * len(header),
    ]
    for row in table:
        spec = ".3f" if row["unit"] == "s" else ".1f"
        met = {True: "yes", False: "NO", None: ""}[row["met"]]
        lines.append(
            f"{row['item']:<48} {num(row['median'], spec) + row['unit'][0]:>9} "
            f"{num(row['min'], spec) + (row['unit'][0] if row['min'] is not None else ''):>9} "
            f"{row['baseline']:<20} {num(row['baseline_median'], spec):>9} {num(row['baseline_min'], spec):>9} "
            f"{num(row['ratio'], '.3f') + 'x':>8} {num(row['ratio_min'], '.3f') + ('x' if row['ratio_min'] else ''):>10} "
            f"{row['target'] or '':>9} {met:>4}".rstrip()
        )
        if row["note"]:
            lines.append(f"{'':<4}{row['note']}")
    lines.append("units: s = seconds, M = MiB (peak RSS rise); ratio = median / baseline median")
    if not all(m["peak_reset"] for m in [*results["scale_memory"], *results["model_memory"].values()]):
        lines.append("note: VmHWM could not be reset; memory is the growth over earlier peaks")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="smaller sizes and fewer repeats (a smoke run)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write every measurement as JSON here")
    parser.add_argument("--model", default="resnet50", help="mindcv model name (default: resnet50)")
    parser.add_argument("--size", type=int, default=224, help="input height and width (default: 224)")
    parser.add_argument("--repeats", type=int, help="timed runs of each phase (default: 3, --quick: 1)")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-params", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be positive")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.worker:  # hidden: one measurement, in a subprocess started by spawn()
        result = run_worker(args.worker, json.loads(args.worker_params))
        args.worker_out.write_text(json.dumps(result))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip interpreter teardown and MindSpore's noisy Cell.__del__ messages

    repeats = args.repeats or (1 if args.quick else 3)
    print("graphaudit benchmarks: every measurement in a fresh subprocess", file=sys.stderr, flush=True)
    results = measure(
        model=args.model,
        size=args.size,
        repeats=repeats,
        sizes=QUICK_SIZES if args.quick else SIZES,
        traced_sizes=QUICK_TRACED_SIZES if args.quick else TRACED_SIZES,
        scale_repeats=2 if args.quick else 3,
    )
    table = rows(results)
    print(format_table(results, table))
    if args.json:
        args.json.write_text(json.dumps({"results": results, "table": table}, indent=2) + "\n")
        print(f"results written to {args.json}")


if __name__ == "__main__":
    main()

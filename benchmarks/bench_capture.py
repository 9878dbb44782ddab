"""Benchmark graphaudit's capture against a plain forward pass of a mindcv model.

Three phases are measured in one run:

- ``forward``:   ``net(x)`` in PyNative mode, followed by reading the output. PyNative
  dispatches kernels asynchronously, so without the read the timer would stop before
  the pass has finished. (``to_networkx`` needs no read: it reads tensors itself.)
- ``structure``: ``graphaudit.to_networkx(net)``, cells and parameters only.
- ``capture``:   ``graphaudit.to_networkx(net, inputs=x)``, one traced forward pass.

The model is ``mindcv.create_model(name, pretrained=False)``; every measurement runs in a
fresh subprocess that builds it and warms up with one forward pass. One subprocess times
all three phases, interleaved, ``--repeats`` times (so that other load on the machine
hits them alike); then one subprocess per phase runs it once to measure its peak memory.

How to read the results:

- ``time ratio`` = the phase's median wall time / the median wall time of ``forward``.
  It is the cost of the phase in "forward passes"; the targets are < 0.05x for
  ``structure`` and <= 1.5x for ``capture``. Nothing is asserted; ``met`` only reports.
- ``peak +MiB`` = how far the process's peak RSS (VmHWM) rose during the phase above
  the RSS of the warmed-up process, i.e. the memory the phase needs on top of a model
  that has already run once. The peak is reset before the phase by writing ``5`` to
  ``/proc/self/clear_refs``; where that is not possible the growth is measured from the
  warm-up's peak instead and the JSON says ``"peak_reset": false``.
- ``1st fwd +MiB`` = how far peak RSS rose during the warm-up forward pass above the
  freshly built model: what a forward pass needs (activations, kernels, memory pool).
- ``mem ratio`` = ``peak +MiB`` / ``1st fwd +MiB`` of the same process: the extra peak
  memory of the phase in units of the memory of one forward pass. ``forward`` itself is
  near 0 here, because a second pass reuses what the first one allocated.

``tracemalloc`` is not used: it does not see MindSpore's C++ allocations. Linux only
(``/proc/self/status``).

Usage::

    PYTHONPATH=. python benchmarks/bench_capture.py [--model resnet50] [--size 224]
        [--repeats 3] [--json results.json]
"""

from __future__ import annotations

import argparse
import gc
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

PHASES = {
    "forward": "net(x)",
    "structure": "to_networkx(net)",
    "capture": "to_networkx(net, inputs=x)",
}
TARGETS = {"structure": ("<", 0.05), "capture": ("<=", 1.5)}  # on the time ratio
MIB = 1024.0  # /proc/self/status reports KiB


def _status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found in /proc/self/status")


def _reset_peak() -> bool:
    """Reset VmHWM to the current RSS; return whether that worked."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return _status_kib("VmHWM") - _status_kib("VmRSS") < 1024  # HWM now ~= RSS


def _setup(model: str, size: int) -> dict[str, Callable[[], Any]]:
    """Build the model and input; return the three measured calls (run in a subprocess)."""
    import mindcv
    import mindspore as ms
    import numpy as np

    import graphaudit

    ms.set_context(mode=ms.PYNATIVE_MODE)
    np.random.seed(0)
    net = mindcv.create_model(model, pretrained=False)
    x = ms.Tensor(np.random.rand(1, 3, size, size).astype(np.float32))
    return {
        "forward": lambda: net(x).asnumpy(),
        "structure": lambda: graphaudit.to_networkx(net),
        "capture": lambda: graphaudit.to_networkx(net, inputs=x),
    }


def time_phases(model: str, size: int, repeats: int) -> dict[str, Any]:
    """Warm up, then time the phases interleaved, so that a change of load hits them alike."""
    runs = _setup(model, size)
    runs["forward"]()  # warm-up
    seconds: dict[str, list[float]] = {phase: [] for phase in PHASES}
    for _ in range(repeats):
        for phase, run in runs.items():
            start = time.perf_counter()
            run()
            seconds[phase].append(time.perf_counter() - start)
    return seconds


def measure_memory(phase: str, model: str, size: int) -> dict[str, Any]:
    """Peak-RSS growth of a warm-up forward pass and then of one run of *phase*."""
    runs = _setup(model, size)
    gc.collect()
    built_kib = _status_kib("VmRSS")
    _reset_peak()
    runs["forward"]()  # warm-up
    first_forward_kib = _status_kib("VmHWM") - built_kib
    gc.collect()
    warm_kib = _status_kib("VmRSS")
    peak_reset = _reset_peak()
    before_kib = warm_kib if peak_reset else _status_kib("VmHWM")
    result = runs[phase]()
    peak_kib = _status_kib("VmHWM")
    return {
        "peak_increase_mib": (peak_kib - before_kib) / MIB,
        "first_forward_increase_mib": first_forward_kib / MIB,
        "warm_rss_mib": warm_kib / MIB,
        "peak_reset": peak_reset,
        "nodes_edges": None if phase == "forward" else [result.number_of_nodes(), result.number_of_edges()],
    }


def spawn(phase: str, args: argparse.Namespace) -> Any:
    """Run ``--phase`` *phase* in a fresh interpreter, so that its peak memory is its own."""
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "phase.json"
        command = [sys.executable, __file__, "--phase", phase, "--phase-out", str(out)]
        command += ["--model", args.model, "--size", str(args.size), "--repeats", str(args.repeats)]
        proc = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        if proc.returncode != 0 or not out.exists():
            sys.stderr.write(proc.stderr)
            raise SystemExit(f"phase {phase!r} failed (exit code {proc.returncode}); its stderr is above")
        return json.loads(out.read_text())


def _ratio(value: float, reference: float) -> float | None:
    return value / reference if reference > 0 else None


def summarize(
    seconds: dict[str, list[float]], memory: dict[str, dict[str, Any]], args: argparse.Namespace
) -> dict[str, Any]:
    import mindspore as ms

    phases: dict[str, dict[str, Any]] = {}
    baseline = statistics.median(seconds["forward"])
    for phase in PHASES:
        times = seconds[phase]
        res = phases[phase] = {"seconds": times, "median_s": statistics.median(times), "min_s": min(times)}
        res["time_ratio"] = _ratio(res["median_s"], baseline)
        res.update(memory[phase])
        res["mem_ratio"] = _ratio(res["peak_increase_mib"], res["first_forward_increase_mib"])
        if phase in TARGETS:
            op, limit = TARGETS[phase]
            ratio = res["time_ratio"]
            res["target"] = f"{op} {limit}x"
            res["target_met"] = ratio is not None and (ratio < limit if op == "<" else ratio <= limit)
    return {
        "model": args.model,
        "input_shape": [1, 3, args.size, args.size],
        "repeats": args.repeats,
        "mindspore_version": ms.__version__,
        "python_version": platform.python_version(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "load_average_1min": os.getloadavg()[0],
        "phases": phases,
    }


def format_table(report: dict[str, Any]) -> str:
    def num(value: float | None, spec: str) -> str:
        return "n/a" if value is None else format(value, spec)

    header = (
        f"{'phase':<10} {'call':<27} {'median s':>9} {'time ratio':>10} {'target':>8} {'met':>4} "
        f"{'peak +MiB':>10} {'1st fwd +MiB':>12} {'mem ratio':>9} {'nodes/edges':>12}"
    )
    lines = [
        f"graphaudit capture benchmark: {report['model']}, input {tuple(report['input_shape'])}, "
        f"median of {report['repeats']}, mindspore {report['mindspore_version']}, "
        f"{report['cpu_count']} CPUs (1-min load average at the end: {report['load_average_1min']:.1f})",
        header,
        "-" * len(header),
    ]
    for phase, res in report["phases"].items():
        met = {True: "yes", False: "NO", None: ""}[res.get("target_met")]
        size = "/".join(map(str, res["nodes_edges"])) if res["nodes_edges"] else ""
        lines.append(
            f"{phase:<10} {PHASES[phase]:<27} {res['median_s']:>9.3f} "
            f"{num(res['time_ratio'], '.3f') + 'x':>10} {res.get('target', ''):>8} {met:>4} "
            f"{res['peak_increase_mib']:>10.1f} {res['first_forward_increase_mib']:>12.1f} "
            f"{num(res['mem_ratio'], '.3f') + 'x':>9} {size:>12}".rstrip()
        )
    if not all(res["peak_reset"] for res in report["phases"].values()):
        lines.append("note: VmHWM could not be reset; memory columns are growth over earlier peaks")
    return "\n".join(lines)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--model", default="resnet50", help="mindcv model name (default: resnet50)")
    parser.add_argument("--size", type=int, default=224, help="input height and width (default: 224)")
    parser.add_argument("--repeats", type=int, default=3, help="timed runs of each phase (default: 3)")
    parser.add_argument("--json", type=Path, metavar="PATH", help="also write the results as JSON here")
    parser.add_argument("--phase", choices=["timing", *PHASES], help=argparse.SUPPRESS)
    parser.add_argument("--phase-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.size < 1:
        parser.error("--repeats and --size must be positive")
    return args


def main(argv: list[str] | None = None) -> None:
    args = parse_args(argv)
    if args.phase:  # hidden: one measurement, in a subprocess started by spawn()
        if args.phase == "timing":
            result = time_phases(args.model, args.size, args.repeats)
        else:
            result = measure_memory(args.phase, args.model, args.size)
        args.phase_out.write_text(json.dumps(result))
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(0)  # skip interpreter teardown and MindSpore's noisy Cell.__del__ messages

    print(f"timing {', '.join(PHASES)} interleaved, {args.repeats} times ...", file=sys.stderr, flush=True)
    seconds = spawn("timing", args)
    memory = {}
    for phase in PHASES:
        print(f"measuring the peak memory of {phase} ...", file=sys.stderr, flush=True)
        memory[phase] = spawn(phase, args)
    report = summarize(seconds, memory, args)
    print(format_table(report))
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n")
        print(f"results written to {args.json}")


if __name__ == "__main__":
    main()

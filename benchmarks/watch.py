"""The training watch's cost: ``Model.train`` of mindcv resnet18 with ``graphaudit.Watch()`` / without.

Rows (targets from issue 23; nothing about timing is asserted anywhere):

1. wall time of ``Model.train`` with ``Watch()`` (default sampling, every 50 steps) / the same
   training without it. Target <= 1.03x.
2. the same with ``Watch(every=1)`` (every step sampled: weights copied before and after,
   gradients read) / without. Target <= 1.3x.
3. extra peak memory: the rise of peak RSS (``VmHWM``) of a watched training over that of
   the same training unwatched, each in a fresh process, / the peak RSS of the unwatched
   training process. Target <= 10%.

The timed runs are interleaved in one process (plain, watched, every-step, plain, ...), each
one epoch of ``--steps`` steps (PyNative; ``--mode graph``: GRAPH_MODE, where the watch taps
the compiled step's gradient norms; batches of 8
random ``3x32x32`` images, a Momentum optimizer, ``dataset_sink_mode=False``), after one
warm-up epoch of each; the ratios are of the medians and of the minimums. The load of the
machine is recorded with the numbers (``benchmarks.common.LoadMonitor``).

Usage::

    python -m benchmarks.watch [--steps 100] [--repeats 3] [--pairs 3] [--size 32] [--mode graph] [--json PATH]

``--pairs`` fresh-process pairs (unwatched, watched) measure the memory row: the rise of an
unwatched epoch itself varies by tens of MiB between processes, as much as the effect, so the
row is the median over the pairs, each pair's extra shown. ``--only memory`` or ``--only time``
runs one part (memory does not depend on the load, time does).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from typing import Any

from benchmarks.common import LoadMonitor, status_kib

TARGETS = {"default": 1.03, "every step": 1.3, "memory": 0.10}


def build(steps: int, size: int, batch: int = 8, mode: str = "pynative") -> tuple[Any, Any]:
    import mindcv
    import mindspore as ms
    import numpy as np
    from mindspore import nn

    ms.set_context(mode=ms.GRAPH_MODE if mode == "graph" else ms.PYNATIVE_MODE)
    ms.set_seed(0)
    net = mindcv.create_model("resnet18", pretrained=False, num_classes=10)
    optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
    model = ms.train.Model(net, nn.CrossEntropyLoss(), optimizer)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((steps * batch, 3, size, size)).astype(np.float32)
    y = rng.integers(0, 10, steps * batch).astype(np.int32)
    data = ms.dataset.NumpySlicesDataset({"x": x, "y": y}, shuffle=False).batch(batch)
    return model, data


def train(model: Any, data: Any, watch: Any) -> float:
    start = time.perf_counter()
    model.train(1, data, callbacks=[watch] if watch is not None else None, dataset_sink_mode=False)
    return time.perf_counter() - start


def timed(steps: int, size: int, repeats: int, mode: str = "pynative") -> dict[str, Any]:
    """*mode* ``"graph"``: GRAPH_MODE, where the watch taps the compiled step's gradient norms."""
    import graphaudit

    model, data = build(steps, size, mode=mode)
    variants = {
        "plain": lambda: None,
        "default": lambda: graphaudit.Watch(fail_on="never"),
        "every step": lambda: graphaudit.Watch(every=1, fail_on="never"),
    }
    for make in variants.values():  # warm-up: kernels, the watch's modules
        train(model, data, make())
    seconds: dict[str, list[float]] = {name: [] for name in variants}
    with LoadMonitor() as load:
        for _ in range(repeats):
            for name, make in variants.items():
                seconds[name].append(train(model, data, make()))
                print(
                    f"{name}: {seconds[name][-1]:.2f} s, load {os.getloadavg()[0]:.1f}",
                    file=sys.stderr,
                    flush=True,
                )
    return {"seconds": seconds, "load": load.to_dict()}


def memory(steps: int, size: int, watched: bool) -> dict[str, float]:
    """In this (fresh) process: peak RSS of a training, and its rise over the RSS before it."""
    import graphaudit

    model, data = build(steps, size)
    train(model, data, None)  # the first epoch allocates what every later one reuses
    before = status_kib("VmRSS")
    from benchmarks.common import reset_peak

    reset_peak()
    train(model, data, graphaudit.Watch(every=1, fail_on="never") if watched else None)
    return {"rise_mib": (status_kib("VmHWM") - before) / 1024, "peak_mib": status_kib("VmHWM") / 1024}


def _in_subprocess(args: list[str]) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.watch", "--worker", *args],
        stdout=subprocess.PIPE,
        text=True,
        check=False,
    )  # the worker's progress lines go to this process's stderr
    if done.returncode != 0:
        raise RuntimeError(f"the worker {args[0]} failed with exit code {done.returncode}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def _print_time(result: dict[str, Any], args: argparse.Namespace) -> None:
    seconds = result["seconds"]
    load = result["load"]
    print(
        f"Model.train of mindcv resnet18 ({args.mode}), 1 epoch of {args.steps} steps (8x3x{args.size}x{args.size}), "
        f"{args.repeats} interleaved repeats; load average {load['load_before'][0]:.1f} -> "
        f"{load['load_after'][0]:.1f} (max {load['load_max']:.1f}), other processes "
        f"{load['others_cores'] if load['others_cores'] is None else round(load['others_cores'], 2)} cores "
        f"of {load['cores']}"
    )
    print("| measured | median s | min s | ratio of medians | ratio of minimums | target | met |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    base_med, base_min = statistics.median(seconds["plain"]), min(seconds["plain"])
    print(f"| without Watch | {base_med:.2f} | {base_min:.2f} | 1 | 1 | | |")
    for name in ("default", "every step"):
        med, low = statistics.median(seconds[name]), min(seconds[name])
        ratio = med / base_med
        print(
            f"| Watch() {name} | {med:.2f} | {low:.2f} | {ratio:.3f}x | {low / base_min:.3f}x | "
            f"<= {TARGETS[name]}x | {'yes' if ratio <= TARGETS[name] else 'NO'} |"
        )


def _print_memory(pairs: list[dict[str, dict[str, float]]]) -> None:
    print(
        "| memory pair | unwatched rise MiB (peak MiB) | watched rise MiB (peak MiB) | extra / unwatched peak |"
    )
    print("| --- | --- | --- | --- |")
    extras = []
    for number, pair in enumerate(pairs, 1):
        plain, watched = pair["plain"], pair["watched"]
        extras.append((watched["rise_mib"] - plain["rise_mib"]) / plain["peak_mib"])
        print(
            f"| {number} | {plain['rise_mib']:.1f} ({plain['peak_mib']:.0f}) | "
            f"{watched['rise_mib']:.1f} ({watched['peak_mib']:.0f}) | {extras[-1]:.1%} |"
        )
    extra = statistics.median(extras)
    print(
        f"extra peak memory of Watch(every=1), median of {len(pairs)} pairs: {extra:.1%} "
        f"(target <= 10%: {'yes' if extra <= TARGETS['memory'] else 'NO'})"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--size", type=int, default=32)
    parser.add_argument("--pairs", type=int, default=3)
    parser.add_argument("--only", choices=["time", "memory"])
    parser.add_argument(
        "--mode", choices=["pynative", "graph"], default="pynative", help="the timed epochs' mode"
    )
    parser.add_argument("--json")
    parser.add_argument("--worker", choices=["timed", "memory-plain", "memory-watched"])
    args = parser.parse_args()
    if args.worker == "timed":
        print(json.dumps(timed(args.steps, args.size, args.repeats, args.mode)))
        return
    if args.worker is not None:
        print(json.dumps(memory(args.steps, args.size, args.worker == "memory-watched")))
        return
    common = ["--steps", str(args.steps), "--size", str(args.size), "--repeats", str(args.repeats)]
    common += ["--mode", args.mode]
    result: dict[str, Any] = {}
    if args.only != "memory":
        result.update(_in_subprocess(["timed", *common]))
        _print_time(result, args)
    if args.only != "time":
        result["memory_pairs"] = [
            {
                "plain": _in_subprocess(["memory-plain", *common]),
                "watched": _in_subprocess(["memory-watched", *common]),
            }
            for _ in range(args.pairs)
        ]
        _print_memory(result["memory_pairs"])
    if args.json:
        with open(args.json, "w", encoding="utf-8") as handle:
            json.dump(result, handle, indent=2)


if __name__ == "__main__":
    main()

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
1u-2u. the audit's own work in microseconds per unit, independent of the kernels' speed (issue
   40): the structure-only audit per parameter (target <= 25 us), the full audit of the model
   on a ``1x3x32x32`` input (the same cell calls, kernels ~50x shorter) minus its forward pass
   per traced cell call (<= 370 us), the checks of a full audit per check run (<= 1,000 us). The
   first two are issue 40's ratios where a resnet50 pass takes 0.34 s, turned into units.
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
   mode (what the audit adds to a process that already ran one), target <= 0.2x. For
   information, that row taken apart in one more process per mode (``model.memory_parts``):
   MindSpore's own growth (a second plain forward pass and the loss's first run, both of which
   the audit after a forward runs) and what is left of the row, graphaudit's part; with
   tracemalloc's peak of Python's allocations during such an audit (yet another process).
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
    (``2x3x224x224``, the batch probe) and on a GPT-style decoder (``2x64`` tokens, every probe)
    / one PyNative forward pass of the same batch, in inference and in training mode (two
    rows each). Target <= 2x (issue 26).
12. the training watch (``benchmarks/watch.py``, issue 23): ``Model.train`` of mindcv resnet18
    (one epoch of 100 steps, batches of ``8x3x32x32``, PyNative) with ``graphaudit.Watch()``
    (default sampling) and with ``Watch(every=1)`` / the same training without it, interleaved
    in one process; targets <= 1.03x and <= 1.3x. And the extra peak RSS of a watched epoch
    (``every=1``) over an unwatched one, each in a fresh process, / the unwatched process's
    peak RSS; target <= 10%. And under ``msrun`` (``benchmarks/watch_msrun.py``, issue 36): one
    2-rank job trains a data-parallel MLP, one epoch of 200 steps at a time, watched
    (``Watch()``: it all-gathers the ranks' losses at each sampled step) and unwatched,
    interleaved; rank 0's median epoch / the unwatched one's, target <= 1.03x.
13. optional anchor (``benchmarks/torchview_anchor.py``): torchview's ``draw_graph`` on
    torchvision's resnet50 / a resnet50 forward pass (``1x3x224x224``), both in the
    interpreter given by ``--torch-python PATH`` (default: ``$GRAPHAUDIT_TORCH_PYTHON``), which
    must have ``torch``, ``torchvision`` and ``torchview`` (never graphaudit's dependencies).
    Information, beside rows 2-3; without such an interpreter the table says it was skipped
    and why.

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
                             [--torch-python PATH] [--only GROUP[,GROUP...]]

``--only GROUP[,GROUP...]`` runs just those groups (keys of ``groups.GROUPS``: ``model_time``,
``model_memory``, ``probe``, ...) and prints their rows.

``--quick`` is a smoke run: every group, on smaller sizes with one repeat (the watch: 4 steps).
The code: this file is the command line; ``groups.py`` runs the groups (a worker subprocess
each, the load policy), ``rows.py`` / ``rows_extra.py`` make the rows from the results,
``table.py`` prints them, ``settings.py`` holds the sizes and targets.

Linux only (``/proc/self/status``, ``/proc/stat``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # `python benchmarks/run.py` without PYTHONPATH
    sys.path.insert(0, str(ROOT))

# The pieces, re-exported: callers (tests, scripts) use ``run.measure``, ``run.rows``, ...
from benchmarks.groups import GROUPS, LoadPolicy, Refused, measure, run_group, run_worker, spawn  # noqa: E402
from benchmarks.rows import rows  # noqa: E402
from benchmarks.settings import (  # noqa: E402
    EXIT_INVARIANT,
    EXIT_REFUSED,
    QUICK_SIZES,
    QUICK_TRACED_SIZES,
    SIZES,
    TARGETS,
    TRACED_SIZES,
)
from benchmarks.table import format_group, format_table, invariants_hold  # noqa: E402

__all__ = [
    "GROUPS",
    "TARGETS",
    "LoadPolicy",
    "Refused",
    "format_group",
    "format_table",
    "invariants_hold",
    "main",
    "measure",
    "rows",
    "run_group",
    "run_worker",
    "spawn",
]


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
    parser.add_argument(
        "--torch-python",
        metavar="PATH",
        help="a Python with torch, torchvision and torchview for the optional torchview anchor row "
        "(default: $GRAPHAUDIT_TORCH_PYTHON; without one the row is skipped with a message)",
    )
    parser.add_argument(
        "--only",
        metavar="GROUP[,GROUP...]",
        help="run only these groups (their rows only), e.g. --only model_memory,probe; the groups: "
        + ", ".join(GROUPS),
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--worker-params", help=argparse.SUPPRESS)
    parser.add_argument("--worker-out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.repeats is not None and args.repeats < 1:
        parser.error("--repeats must be positive")
    if args.max_load is not None and args.max_load <= 0:
        parser.error("--max-load must be positive")
    if args.only is not None:
        args.only = [name.strip() for name in args.only.split(",") if name.strip()]
        unknown = [name for name in args.only if name not in GROUPS]
        if unknown or not args.only:
            parser.error(
                f"--only: unknown group(s) {', '.join(unknown) or '(none given)'}; the groups: {', '.join(GROUPS)}"
            )
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
            probe_repeats=1 if args.quick else 3,
            dependency_size=64 if args.quick else 224,
            dependency_repeats=1 if args.quick else 9,
            reference_repeats=1 if args.quick else 5,
            reference_batches=(1,) if args.quick else (1, 4),
            watch_steps=4 if args.quick else 100,
            watch_repeats=1 if args.quick else 3,
            watch_graph_repeats=1 if args.quick else 3,
            watch_msrun_steps=20 if args.quick else 200,
            watch_msrun_repeats=1 if args.quick else 5,
            torch_python=args.torch_python,
            anchor_repeats=1 if args.quick else 5,
            policy=policy,
            only=args.only,
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

"""The anchor row: torchview's ``draw_graph`` on torchvision's resnet50 / a resnet50 forward pass.

torchview is what PyTorch users draw networks with (issue 21): its ratio stands beside
graphaudit's in the same benchmark run. This script runs in a separate interpreter that has
``torch``, ``torchvision`` and ``torchview`` (never graphaudit's dependencies: it imports
none of graphaudit, MindSpore or the rest of ``benchmarks``), started by
``benchmarks/groups.py`` with ``--torch-python`` / ``$GRAPHAUDIT_TORCH_PYTHON``.

Timed interleaved after one warm-up of each, in one process, CPU:

- ``forward``: ``model(x)`` under ``torch.no_grad()``, ``x`` of ``1x3x224x224``, untrained
  weights, inference mode (``model.eval()``), the output read (``.numpy()``).
- ``draw_graph``: ``torchview.draw_graph(model, input_data=x)``: it runs the forward pass
  traced and builds the graphviz graph (not rendered to a file, as torchview's default).

Prints one JSON object on its last line of stdout::

    /path/to/torch/python benchmarks/torchview_anchor.py --repeats 5 --size 224
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any


def measure(repeats: int, size: int) -> dict[str, Any]:
    import torch
    import torchview
    import torchvision

    torch.manual_seed(0)
    model = torchvision.models.resnet50(weights=None).eval()
    x = torch.rand(1, 3, size, size)

    def forward() -> None:
        with torch.no_grad():
            model(x).numpy()

    def draw() -> None:
        torchview.draw_graph(model, input_data=x, device="cpu")

    runs: dict[str, Callable[[], None]] = {"forward": forward, "draw_graph": draw}
    for run in runs.values():  # warm-up: allocator, torchview's modules
        run()
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    return {
        "seconds": seconds,
        "median_ratio": statistics.median(seconds["draw_graph"]) / statistics.median(seconds["forward"]),
        "input_shape": [1, 3, size, size],
        "versions": {
            "torch": torch.__version__,
            "torchvision": torchvision.__version__,
            "torchview": getattr(torchview, "__version__", "?"),
        },
        "threads": torch.get_num_threads(),
    }


ENV = "GRAPHAUDIT_TORCH_PYTHON"  # the documented default of run.py's --torch-python


def find_torch_python(option: str | None) -> tuple[str | None, str]:
    """The interpreter to run this script with, or None and why the anchor row is skipped."""
    chosen = option or os.environ.get(ENV)
    if not chosen:
        return None, (
            f"no interpreter with torch, torchvision and torchview: pass --torch-python PATH or set ${ENV}"
        )
    if not os.access(chosen, os.X_OK):
        return None, f"--torch-python / ${ENV} {chosen!r} is not an executable file"
    probe = subprocess.run(
        [chosen, "-c", "import torch, torchvision, torchview"], capture_output=True, text=True, check=False
    )
    if probe.returncode != 0:
        last = (probe.stderr.strip().splitlines() or ["?"])[-1]
        return None, f"{chosen} cannot import torch, torchvision and torchview ({last})"
    return chosen, ""


def time_torchview(python: str, repeats: int, size: int) -> dict[str, Any]:
    """Run :func:`measure` in *python* (a subprocess) and return its result."""
    done = subprocess.run(
        [python, os.path.abspath(__file__), "--repeats", str(repeats), "--size", str(size)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stderr[-5000:])
        raise RuntimeError(f"the torchview anchor failed in {python} (exit code {done.returncode})")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "python": python}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--size", type=int, default=224)
    args = parser.parse_args()
    print(json.dumps(measure(args.repeats, args.size)))


if __name__ == "__main__":
    main()

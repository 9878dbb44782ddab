"""Helpers shared by the benchmarks: peak-memory probes, timing, the synthetic networks.

Linux only: peak memory is read from ``/proc/self/status`` (``VmHWM``, the resident-set high
water mark) after resetting it by writing ``5`` to ``/proc/self/clear_refs``. ``tracemalloc``
is not used: it does not see MindSpore's C++ allocations.
"""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

MIB = 1024.0  # /proc/self/status reports KiB


def status_kib(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1])
    raise RuntimeError(f"{field} not found in /proc/self/status")


def reset_peak() -> bool:
    """Reset VmHWM to the current RSS; return whether that worked."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
    except OSError:
        return False
    return status_kib("VmHWM") - status_kib("VmRSS") < 1024  # HWM now ~= RSS


def peak_rise_mib(run: Callable[[], Any]) -> tuple[float, bool, Any]:
    """How far peak RSS rose above the current RSS while *run* ran: ``(MiB, peak_reset, result)``.

    Without a resettable peak the rise is measured from the earlier peak instead (an
    underestimate), and ``peak_reset`` is False.
    """
    gc.collect()
    before = status_kib("VmRSS")
    reset = reset_peak()
    if not reset:
        before = status_kib("VmHWM")
    result = run()
    return (status_kib("VmHWM") - before) / MIB, reset, result


def interleave(runs: dict[str, Callable[[], Any]], repeats: int) -> dict[str, list[float]]:
    """Time every run *repeats* times, interleaved (a, b, c, a, b, c...), so load hits them alike."""
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            run()
            seconds[name].append(time.perf_counter() - start)
    return seconds


def stats(times: list[float]) -> dict[str, Any]:
    return {"seconds": times, "median_s": statistics.median(times), "min_s": min(times)}


def synthetic_net(stages: int = 50, width: int = 100) -> Any:
    """``stages`` SequentialCells of ``width`` leaf cells, alternating ``Dense(4, 4)`` and an activation.

    ``1 + stages + stages * width`` cells and ``stages * width`` parameters (a Dense has a
    weight and a bias, every other leaf is a Dense). Consecutive stages use different
    activations (ReLU, Tanh, Sigmoid), so rolling up repeated blocks cannot shrink a drawing.
    """
    from mindspore import nn

    acts = (nn.ReLU, nn.Tanh, nn.Sigmoid)
    return nn.SequentialCell(
        [
            nn.SequentialCell([nn.Dense(4, 4) if j % 2 == 0 else acts[s % 3]() for j in range(width)])
            for s in range(stages)
        ]
    )


def synthetic_of_size(cells: int, width: int = 100) -> Any:
    """A :func:`synthetic_net` of about *cells* leaf cells (and as many parameters)."""
    width = min(width, cells)
    return synthetic_net(max(1, cells // width), width)


def count_cells(net: Any) -> int:
    return sum(1 for _ in net.cells_and_names())

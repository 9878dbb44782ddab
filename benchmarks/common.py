"""Helpers shared by the benchmarks: peak-memory probes, timing, load monitoring, the synthetic networks.

Linux only: peak memory is read from ``/proc/self/status`` (``VmHWM``, the resident-set high
water mark) after resetting it by writing ``5`` to ``/proc/self/clear_refs``. ``tracemalloc``
is not used: it does not see MindSpore's C++ allocations. The load of the machine is read from
``os.getloadavg()`` and ``/proc/stat`` (see :class:`LoadMonitor`).
"""

from __future__ import annotations

import gc
import os
import resource
import statistics
import threading
import time
from collections.abc import Callable, Collection
from dataclasses import asdict, dataclass, field
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


def import_graphaudit() -> tuple[float, list[str]]:
    """Import every module of graphaudit now; return ``(RSS rise in MiB, modules that failed)``.

    graphaudit imports its checks, evidence and drawing modules lazily, on the first audit
    that needs them; a memory measurement of "the first audit in a process" would otherwise
    count those one-time imports as the audit's memory. ``__main__`` and the pytest plugin are
    left out.
    """
    import importlib
    import pkgutil

    import graphaudit

    before = status_kib("VmRSS")
    failed = []
    for module in pkgutil.walk_packages(graphaudit.__path__, "graphaudit."):
        if module.name in ("graphaudit.__main__", "graphaudit.pytest_plugin"):
            continue
        try:
            importlib.import_module(module.name)
        except Exception:  # a module another developer is still writing must not stop the benchmark
            failed.append(module.name)
    return (status_kib("VmRSS") - before) / MIB, failed


def interleave(
    runs: dict[str, Callable[[], Any]], repeats: int, self_timed: Collection[str] = ()
) -> dict[str, list[float]]:
    """Time every run *repeats* times, interleaved (a, b, c, a, b, c...), so load hits them alike.

    A run named in *self_timed* times itself and returns its seconds (for a pass whose set-up,
    such as installing wrappers, must not be counted).
    """
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    for _ in range(repeats):
        for name, run in runs.items():
            start = time.perf_counter()
            result = run()
            elapsed = time.perf_counter() - start
            seconds[name].append(float(result) if name in self_timed else elapsed)
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


# -- load of the machine --------------------------------------------------------------------------
def usable_cores() -> int:
    """The cores this process may run on (``sched_getaffinity``), else ``os.cpu_count()``."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def cpu_model() -> str:
    """The CPU's model name (``/proc/cpuinfo``), else the platform's processor, else ``"unknown"``."""
    import platform

    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine_busy_seconds() -> float | None:
    """CPU seconds every CPU of the machine spent busy since boot (``/proc/stat``), or None."""
    try:
        first = Path("/proc/stat").read_text().split("\n", 1)[0].split()
    except OSError:
        return None
    if not first or first[0] != "cpu":
        return None
    ticks = [int(v) for v in first[1:9]]  # user nice system idle iowait irq softirq steal (guest is in user)
    idle = ticks[3] + (ticks[4] if len(ticks) > 4 else 0)
    return (sum(ticks) - idle) / os.sysconf("SC_CLK_TCK")


def own_cpu_seconds() -> float:
    """CPU seconds of this process and of its waited-for children (workers, ``dot``...)."""
    total = 0.0
    for who in (resource.RUSAGE_SELF, resource.RUSAGE_CHILDREN):
        usage = resource.getrusage(who)
        total += usage.ru_utime + usage.ru_stime
    return total


@dataclass
class GroupLoad:
    """How loaded the machine was while one group of measurements ran.

    ``load_before`` / ``load_after``: ``os.getloadavg()`` (1, 5, 15 min) just before / after;
    ``load_max``: the highest 1-min load average sampled before, during (every ``interval``
    seconds) and after. ``own_cores``: the CPU the benchmark itself used (this process and its
    children), in cores, averaged over the group; ``others_cores``: the CPU every *other* process
    used, from ``/proc/stat`` (``None`` where it cannot be read). See :meth:`verdict`.
    """

    cores: int
    wall_s: float = 0.0
    load_before: list[float] = field(default_factory=list)
    load_after: list[float] = field(default_factory=list)
    load_max: float = 0.0
    own_cores: float = 0.0
    others_cores: float | None = None

    def reasons(self, threshold: float) -> list[str]:
        """Why the group counts as loaded against *threshold* (a load, in cores); empty if it does not.

        Loaded when other processes used more than half of *threshold* in cores on average
        over the group (``/proc/stat`` minus the benchmark's own ``getrusage``: exact over the
        group's own seconds). Only where that cannot be read, the 1-min load average minus the
        benchmark's own CPU use must not exceed *threshold*. The load average cannot tell the
        benchmark's threads from others': MindSpore's runnable threads alone kept a 2-core
        machine at load 4.2 with 0.01 cores used by anything else (the resnet18 probe group).
        """
        if self.others_cores is not None:
            if self.others_cores > threshold / 2:
                return [f"other processes used {self.others_cores:.2f} cores > {threshold / 2:g}"]
            return []
        if self.load_max - self.own_cores > threshold:
            return [f"load average {self.load_max:.1f} - own {self.own_cores:.1f} > {threshold:g}"]
        return []

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class LoadMonitor:
    """``with LoadMonitor() as load: ...``: fills *load* (a :class:`GroupLoad`) for the block."""

    def __init__(self, interval: float = 1.0) -> None:
        self.interval = interval
        self.load = GroupLoad(cores=usable_cores())
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def _sample(self) -> None:
        while not self._stop.wait(self.interval):
            self.load.load_max = max(self.load.load_max, os.getloadavg()[0])

    def __enter__(self) -> GroupLoad:
        self.load.load_before = list(os.getloadavg())
        self.load.load_max = self.load.load_before[0]
        self._busy = machine_busy_seconds()
        self._own = own_cpu_seconds()
        self._start = time.perf_counter()
        self._thread = threading.Thread(target=self._sample, daemon=True)
        self._thread.start()
        return self.load

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()
        wall = max(time.perf_counter() - self._start, 1e-9)
        own = own_cpu_seconds() - self._own
        busy = machine_busy_seconds()
        load = self.load
        load.wall_s = wall
        load.load_after = list(os.getloadavg())
        load.load_max = max(load.load_max, load.load_after[0])
        load.own_cores = own / wall
        if busy is not None and self._busy is not None:
            load.others_cores = max(0.0, (busy - self._busy - own) / wall)


def others_cores_now(seconds: float = 3.0) -> float | None:
    """CPU (in cores) used by every process but this one over the next *seconds*."""
    busy, own = machine_busy_seconds(), own_cpu_seconds()
    time.sleep(seconds)
    after = machine_busy_seconds()
    if busy is None or after is None:
        return None
    return max(0.0, (after - busy - (own_cpu_seconds() - own)) / seconds)

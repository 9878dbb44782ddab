"""Judging a watched run against a known-good run of the same recipe (GA966-GA968; ``docs/watch.md``).

The thresholds, and the measurements behind them (MindSpore 2.10, CPU; ``tests/baseline_recipe.py``:
a 64-64-32-10 ReLU MLP on scikit-learn's ``load_digits``, standardised, batch 32, Momentum(0.02,
0.9) with a one-epoch linear warm-up, 3 epochs = 168 steps, sampled every 4 steps; the same
numbers in PyNative, GRAPH_MODE and a functional loop). Healthy reruns against the baseline:
another data order (3 runs), another data order and initialisation (8 runs). Planted: the
second layer's weight left out of the optimizer (``requires_grad=False``), a 10x learning
rate, the warm-up dropped.

- The loss (GA966) is compared in blocks of :func:`block_size` steps: the median of each run
  over the block, their difference in units of the baseline's own step-to-step noise there
  (``sigma`` as the loss rules take it, over the block and the blocks either side). Healthy:
  at most 3.9 sigma in any block (another initialisation; another data order alone 1.1).
  Planted: the frozen layer 10, the 10x rate 32-74, the dropped warm-up 21 (below). A block
  is outside the band at :data:`LOSS_BAND` sigma; the check fires when :data:`BLOCKS_OUT` are.
- Gradient norms and update ratios (GA967) are compared at the steps both runs sampled, per
  parameter, by the median over those steps of ``log10(here / there)``. Healthy: at most 0.11
  (1.3x) at the median, single steps up to 0.56 (3.6x). The 10x rate: update ratios 0.59-0.91
  (3.9x-8.1x) at the median (10x at the first steps; later its weights are larger and its
  gradients smaller), so a 10x bound would miss it. :data:`FAR` (3x, 0.48) is four times the
  healthy median's spread in log, below the 10x rate's.
- A layer stopped training (GA968) when it trained in the baseline (median update ratio at
  least :data:`TRAINED`) and here is not in the optimizer, never moved, or moves
  :data:`STOPPED` (100x) less at the median (healthy: within 1.5x).

Example:
    >>> [round(b.z, 1) for b in loss_blocks([2.0 - 0.01 * i for i in range(40)], [2.0 - 0.01 * i for i in range(40)])][:2]
    [0.0, 0.0]
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

from graphaudit.checks._shared.watch import MIN_STEPS
from graphaudit.evidence.training import Sample

__all__ = [
    "BLOCKS_OUT",
    "FAR",
    "LOSS_BAND",
    "STOPPED",
    "TRAINED",
    "LossBlock",
    "block_size",
    "log_ratios",
    "loss_blocks",
    "median_log_ratio",
    "stopped",
]

LOSS_BAND = 5.0
BLOCKS_OUT = 2
FAR = 3.0
STOPPED = 100.0
#: An update ratio below this (a millionth of the weight a step) is no training in the baseline either.
TRAINED = 1e-6


@dataclass(frozen=True)
class LossBlock:
    """Steps ``first``..``last`` (from 1): each run's median loss there and the baseline's noise."""

    first: int
    last: int
    baseline: float
    here: float
    sigma: float

    @property
    def z(self) -> float:
        return (self.here - self.baseline) / self.sigma


def block_size(steps: int) -> int:
    """Blocks of a twentieth of the compared steps, 5 at least (the windows of the loss rules)."""
    return max(5, steps // 20)


def _sigma(values: Sequence[float]) -> float:
    """The step-to-step noise of *values* (as the loss rules of :mod:`graphaudit.checks._shared.watch` take it)."""
    diffs = [abs(b - a) for a, b in zip(values, values[1:])]
    return 1.4826 * statistics.median(diffs) / math.sqrt(2.0) if diffs else 0.0


def _finite_prefix(values: Sequence[float]) -> list[float]:
    kept = []
    for v in values:
        if not math.isfinite(v):
            break
        kept.append(float(v))
    return kept


def loss_blocks(baseline: Sequence[float], here: Sequence[float]) -> list[LossBlock]:
    """The two loss curves compared block by block over their common finite steps (none under 20)."""
    a, b = _finite_prefix(baseline), _finite_prefix(here)
    n = min(len(a), len(b))
    if n < MIN_STEPS:
        return []
    size = block_size(n)
    blocks = []
    for start in range(0, n - size + 1, size):
        around = a[max(0, start - size) : min(n, start + 2 * size)]
        centre = statistics.median(a[start : start + size])
        # a floor: a flat stretch of the baseline (noise 0) must not make every rounding a departure
        sigma = max(_sigma(around), 1e-3 * abs(centre), 1e-12)
        blocks.append(
            LossBlock(start + 1, start + size, centre, statistics.median(b[start : start + size]), sigma)
        )
    return blocks


def _ratio(sample: Sample, position: int) -> float | None:
    value = sample.ratio(position)
    return value if value is not None and math.isfinite(value) else None


def log_ratios(pairs: Sequence[tuple[int, Sample, Sample]], there: int, here: int, what: str) -> list[float]:
    """``log10(here / there)`` of the parameter's *what* (``"grad"`` or ``"ratio"``) at each compared step.

    A value that is zero here and positive there is ``-inf`` (it stopped); one that is zero or
    unknown in the baseline is not compared.
    """
    found = []
    for _, base, now in pairs:
        if what == "grad":
            if base.grad_norms is None or now.grad_norms is None:
                continue
            a, b = base.grad_norms[there], now.grad_norms[here]
        else:
            a, b = _ratio(base, there), _ratio(now, here)
        if a is None or b is None or not math.isfinite(a) or not math.isfinite(b) or a <= 0:
            continue
        found.append(math.log10(b / a) if b > 0 else -math.inf)
    return found


def median_log_ratio(values: Sequence[float]) -> float | None:
    """The median of *values* (``None`` when fewer than 3: too few steps to say)."""
    return statistics.median(values) if len(values) >= 3 else None


def stopped(update_logs: Sequence[float]) -> float | None:
    """How many times less than in the baseline a parameter moved, at the median, from :func:`log_ratios` of its
    update ratio: ``None`` when it did not stop training (it moved at least a :data:`STOPPED`-th as much).

    GA968 reports it; GA967 leaves such a parameter to GA968.

    Example:
        >>> round(stopped([-2.5, -3.0, -2.0])), stopped([-0.1, 0.0, 0.1])
        (316, None)
    """
    median = median_log_ratio(update_logs)
    if median is None or median > -math.log10(STOPPED):
        return None
    return 10 ** (-median)

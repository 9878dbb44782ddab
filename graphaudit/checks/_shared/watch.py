"""What the watchpoints (GA950-GA979) share: the loss curve against its own noise, the noise scale, nodes.

The loss of a minibatch run is noisy: each step sees another batch. Every loss rule here
compares a change with the run's own noise, estimated robustly from the step-to-step
differences: ``sigma = 1.4826 * median(|diff|) / sqrt(2)`` (the MAD of a difference of two
independent draws is sqrt(2) times theirs; 1.4826 makes a MAD a standard deviation for
Gaussian noise). The start and the end of the run are the medians of its first and last
fifth (at least :data:`MIN_WINDOW` steps), whose difference has a standard error of about
``1.2533 * sigma * sqrt(2 / window)`` (the median's efficiency is 2/pi).

Example:
    >>> curve = loss_curve([3.0 - 0.1 * i + (0.05 if i % 2 else -0.05) for i in range(25)])
    >>> round(curve.head, 2), round(curve.tail, 2), curve.fall > 3 * curve.standard_error
    (2.75, 0.75, True)
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit import graph as g

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = [
    "BOUNCE",
    "FAR_ABOVE_NOISE_SCALE",
    "GRADIENT_GROWTH",
    "GRADIENT_VANISHING",
    "LOSS_RISE",
    "MIN_STEPS",
    "MIN_WINDOW",
    "LossCurve",
    "loss_curve",
    "noise_scale",
    "parameter_nodes",
]

#: The fewest finite losses the loss rules judge.
MIN_STEPS = 20
MIN_WINDOW = 5
#: Step-to-step noise above this fraction of the loss itself, with no fall beyond it, is oscillation.
BOUNCE = 0.5
#: A batch this many times the simple noise scale spends ~this many times the examples (McCandlish et al. 2018, eq. 2.12).
FAR_ABOVE_NOISE_SCALE = 10.0
# The watch's own bounds, on the quantities the watch measures (a run's sampled steps), set apart
# from the probe's (one batch, a few steps: checks/_shared/curves.py) so that retuning one does not
# retune the other. The healthy recipes (tests/healthy_recipes.py, docs/watch.md) measured:
#: the end of the loss above its start by more than this fraction (and 3 standard errors) is a
#: divergence (GA951): healthy runs ended 9.1-10.0 times this bound *below* their start.
LOSS_RISE = 0.10
#: a weight matrix's median RMS gradient below this fraction of the strongest layer's is vanishing
#: (GA958): the weakest layer of a healthy run sat at 0.13-0.39, four orders of magnitude above.
GRADIENT_VANISHING = 1e-5
#: the gradient norm grown by more than this factor over its first sampled value is exploding
#: (GA959): healthy runs grew 1-10x.
GRADIENT_GROWTH = 1e4


@dataclass(frozen=True)
class LossCurve:
    """The start, the end, the run's noise, and the noise of its start and end."""

    losses: tuple[float, ...]
    window: int
    head: float
    tail: float
    sigma: float
    sigma_head: float
    sigma_tail: float

    @property
    def fall(self) -> float:
        return self.head - self.tail

    @property
    def standard_error(self) -> float:
        """Of :attr:`fall`: the two medians' standard errors combined."""
        return 1.2533 * self.sigma * math.sqrt(2.0 / self.window)

    @property
    def oscillates(self) -> bool:
        """No fall beyond the noise, and at the end a noise above :data:`BOUNCE` times the loss."""
        return self.fall < 3 * self.standard_error and self.sigma_tail > BOUNCE * abs(self.tail) > 0


def _sigma(values: Sequence[float]) -> float:
    diffs = [abs(b - a) for a, b in zip(values, values[1:])]
    return 1.4826 * statistics.median(diffs) / math.sqrt(2.0) if diffs else 0.0


def loss_curve(losses: Sequence[float]) -> LossCurve | None:
    """The finite prefix of *losses* as a :class:`LossCurve`, or ``None`` when it is shorter than :data:`MIN_STEPS`."""
    finite: list[float] = []
    for value in losses:
        if not math.isfinite(value):
            break
        finite.append(float(value))
    if len(finite) < MIN_STEPS:
        return None
    window = max(MIN_WINDOW, len(finite) // 5)
    head, tail = finite[:window], finite[-window:]
    return LossCurve(
        tuple(finite),
        window,
        statistics.median(head),
        statistics.median(tail),
        _sigma(finite),
        _sigma(head),
        _sigma(tail),
    )


def noise_scale(
    windows: Sequence[tuple[int, float, float]], batch_size: int
) -> tuple[float, float, float] | None:
    """``(B_simple, tr(Σ) estimate, |G|² estimate)`` from gradient windows, or ``None`` when |G|² is not positive.

    Each window of k consecutive gradient samples at batch B gives |G_small|² (the mean of
    |g|², batch B) and |G_big|² (|mean g|², batch kB); McCandlish et al. (2018, appendix
    A.1) unbiased estimates are ``|G|² = (B_big |G_big|² - B_small |G_small|²) / (B_big -
    B_small)`` and ``S = (|G_small|² - |G_big|²) / (1/B_small - 1/B_big)``, averaged over
    windows separately before their ratio ``B_simple = S / |G|²`` is taken.
    """
    grads, traces = [], []
    for k, small, big in windows:
        b_small, b_big = float(batch_size), float(batch_size * k)
        grads.append((b_big * big - b_small * small) / (b_big - b_small))
        traces.append((small - big) / (1.0 / b_small - 1.0 / b_big))
    if not grads:
        return None
    mean_g, mean_s = statistics.fmean(grads), statistics.fmean(traces)
    if mean_g <= 0:
        return None
    return mean_s / mean_g, mean_s, mean_g


def parameter_nodes(ctx: AuditContext, names: Sequence[str]) -> tuple[str, ...]:
    """The graph nodes of the parameters *names* (the root cell when none is in the graph)."""
    nodes = tuple(node for node in (g.parameter_node(n) for n in names) if node in ctx.graph)
    return nodes or (g.cell_node(""),)

"""GA968 layer-stopped-training."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.baseline import TRAINED, log_ratios, stopped
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.baseline import BaselineSamples, WatchBaseline
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, is_are, listing, pronouns


@dataclass(frozen=True)
class LeftOutSinceBaseline(Cause):
    """Parameters that trained in the known-good run and are not in this run's optimizer."""

    names_subjects = True
    source: str  # where the baseline was read from
    names: tuple[str, ...]

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"{counted(len(self.names), 'parameter')} trained in the baseline ({self.source}) "
            f"{is_are(len(self.names))} not in this run's optimizer: {listing(self.names)}. "
            f"{they.subject.capitalize()} {they.keep} {they.possessive} initial values."
        )

    def fix(self) -> str:
        return (
            "Give the optimizer these parameters (net.trainable_params() leaves out those with "
            "requires_grad=False: set it back to True), or, if they are meant to be frozen now, record a "
            "new baseline."
        )


@dataclass(frozen=True)
class StoppedTrainingSinceBaseline(Cause):
    """Parameters that trained in the known-good run and here never moved, or moved 100x less, at the median."""

    names_subjects = True
    source: str  # where the baseline was read from
    steps: int  # the steps sampled in both runs
    names: tuple[str, ...]
    # per parameter, how many times less than in the baseline it moved at the median (None: it never moved)
    slowdowns: tuple[float | None, ...]

    def message(self) -> str:
        how = [
            f"{name} never moved" if slowdown is None else f"{name} moved {slowdown:.3g}x less"
            for name, slowdown in zip(self.names, self.slowdowns)
        ]
        return (
            f"{counted(len(self.names), 'parameter')} that trained in the baseline ({self.source}) stopped "
            f"training here, at the {self.steps} steps sampled in both runs: {listing(how, separator='; ')}."
        )

    def fix(self) -> str:
        return (
            "Find what stops their updates: a learning rate of 0 (or a tiny one) for their parameter group, "
            "a gradient mask or stop_gradient, dead activations before them (a ReLU that no longer fires)."
        )


def _trained(samples: list, position: int) -> bool:
    ratios = [r for s in samples if (r := s.ratio(position)) is not None and math.isfinite(r)]
    return len(ratios) >= 3 and statistics.median(ratios) >= TRAINED


@register(
    "GA968",
    "layer-stopped-training",
    severity="error",
    needs=(TrainingRun, WatchBaseline),
    uses=(BaselineSamples,),
    causes=(LeftOutSinceBaseline, StoppedTrainingSinceBaseline),
    confirms="GA960",
    keeps_message="both",
    once="one finding per watched run and cause (left out of the optimizer, stopped moving): each parameter is listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter that trained in the known-good run does not here: left out, frozen, or 100x slower.

    What it does:
        For every parameter whose update-to-weight ratio ``‖Δw‖/‖w‖`` was, at the median of
        the baseline's sampled steps, at least 1e-6 (``Watch(baseline=...)``: it trained
        there), reports it when this run's optimizer does not hold it (``requires_grad=False``,
        or left out of the optimizer's parameters), or when, at the steps both runs sampled (3
        at least), it never moved or moved 100x less at the median. Measured on a digits MLP:
        healthy reruns stay within 1.5x of the baseline's update ratios; a 10x learning rate
        that killed most ReLUs moved 20x-30x less. A parameter the optimizer holds and never moves is
        also GA960's: this finding is folded into that one. See ``docs/watch.md``.

    Why is this bad:
        A layer that stopped training keeps its initial (or pretrained) values while the rest
        of the network learns around it: the network is smaller than the recipe's, and the
        accuracy falls short of the baseline's without any error. It is the regression a
        refactoring makes most often: a freeze left on, a parameter filter in the optimizer,
        a renamed layer a learning-rate group no longer matches.

    Example:
        ```python
        net[2].weight.requires_grad = False  # left on from a fine-tuning experiment
        optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9)
        ```

    Use instead:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9)
        ```
    """
    record = ctx.need(TrainingRun).record
    baseline = ctx.need(WatchBaseline).baseline
    compared = ctx.get(BaselineSamples)
    samples = [baseline.samples[s] for s in sorted(baseline.samples)]
    here = {name: i for i, name in enumerate(record.parameters)}
    trained = [(i, n) for i, n in enumerate(baseline.parameters) if _trained(samples, i)]
    left_out = [n for _, n in trained if n not in here]
    if left_out:
        cause = LeftOutSinceBaseline(baseline.source, tuple(left_out))
        yield ctx.finding(
            "error", left_out[0], cause, parameter_nodes(ctx, left_out), subjects=tuple(left_out)
        )
    if compared is None:
        return
    slowed: list[tuple[str, float | None]] = []
    for there, name in trained:
        if name not in here:
            continue
        logs = log_ratios(compared.pairs, there, here[name], "ratio")
        slowdown = stopped(logs)
        if slowdown is not None:
            slowed.append((name, None if all(v == -math.inf for v in logs) else float(slowdown)))
    if slowed:
        names = tuple(name for name, _ in slowed)
        cause = StoppedTrainingSinceBaseline(
            baseline.source, len(compared.pairs), names, tuple(slowdown for _, slowdown in slowed)
        )
        yield ctx.finding("error", names[0], cause, parameter_nodes(ctx, names), subjects=names)

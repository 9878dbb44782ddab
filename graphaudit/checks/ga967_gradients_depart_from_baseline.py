"""GA967 gradients-depart-from-baseline."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.baseline import FAR, log_ratios, median_log_ratio, stopped
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.baseline import BaselineSamples, WatchBaseline
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing

_WHAT = {"grad": "gradient norm", "ratio": "update ratio"}


def _times(log: float) -> str:
    return f"{10**log:.3g}x larger" if log > 0 else f"{10 ** (-log):.3g}x smaller"


@dataclass(frozen=True)
class GradientsDepartFromBaseline(Cause):
    """Parameters whose gradient norms or update ratios were far from a known-good run's, at the median."""

    names_subjects = True
    source: str  # where the baseline was read from
    steps: int  # the steps sampled in both runs
    bound: float  # how many times larger or smaller is far
    names: tuple[str, ...]
    # per parameter, log10 of its gradient norm over the baseline's at the median of the steps (None: within bound)
    gradient_logs: tuple[float | None, ...]
    update_logs: tuple[float | None, ...]  # ... and of its update ratio ‖Δw‖/‖w‖ over the baseline's

    def message(self) -> str:
        departed = []
        for name, gradient, update in zip(self.names, self.gradient_logs, self.update_logs):
            far = [
                f"{_WHAT[what]} {_times(log)}"
                for what, log in (("grad", gradient), ("ratio", update))
                if log is not None
            ]
            departed.append(f"{name}: {listing(far, None)}")
        return (
            f"At the {self.steps} steps sampled in both runs, {counted(len(self.names), 'parameter')} got gradients "
            f"or updates {self.bound:g}x or more away from the baseline's ({self.source}), at the median: "
            f"{listing(departed, separator='; ')}."
        )

    def fix(self) -> str:
        return (
            "Compare this run's recipe with the baseline's: larger updates, the learning rate, its schedule "
            "(a warm-up dropped), the loss scale or the loss's reduction (sum for mean); smaller gradients, "
            "what lies between these parameters and the loss (an activation, a detached branch, a scale)."
        )


@register(
    "GA967",
    "gradients-depart-from-baseline",
    severity="warning",
    needs=(TrainingRun, WatchBaseline, BaselineSamples),
    causes=(GradientsDepartFromBaseline,),
    once="one finding per watched run: every parameter whose gradients or updates departed is listed",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Gradient norms or update ratios 3x or more from the known-good run's, at the same steps, at most of them.

    What it does:
        At every step sampled both in the watched run and in the baseline (``Watch(baseline=...)``,
        3 at least), takes per parameter ``log10`` of this run's gradient norm over the
        baseline's, and of its update-to-weight ratio ``‖Δw‖/‖w‖`` over the baseline's; it
        reports the parameters whose median over those steps is 3x or more away (larger or
        smaller): at half the compared steps or more they were. A parameter that stopped
        moving is GA968's. Measured on a digits MLP: healthy reruns stay within 1.3x at the
        median (single steps up to 3.6x); a 10x learning rate gives update ratios 3.9x-8.1x
        the baseline's at the median (10x at the first steps, less once its weights have
        grown), which a 10x bound would miss. See ``docs/watch.md``.

    Why is this bad:
        At the same step of the same recipe the gradients and the updates are of the same
        size; several times larger says the learning rate, its schedule, the loss scale or the
        loss's reduction changed, several times smaller that the gradients no longer reach a
        part of the network as they did. SageMaker Debugger's ``similar_across_runs``
        compares these tensors across two runs.

    Example:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.5, 0.9)  # the baseline ran at 0.05
        ```

    Use instead:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.05, 0.9)
        ```
    """
    record = ctx.need(TrainingRun).record
    baseline = ctx.need(WatchBaseline).baseline
    pairs = ctx.need(BaselineSamples).pairs
    here = {name: i for i, name in enumerate(record.parameters)}
    bound = math.log10(FAR)
    found: list[tuple[str, float | None, float | None]] = []
    for there, name in enumerate(baseline.parameters):
        if name not in here:
            continue  # not in this run's optimizer: no update of it to compare
        logs = {what: log_ratios(pairs, there, here[name], what) for what in _WHAT}
        if stopped(logs["ratio"]) is not None:
            continue  # it stopped training: a change of its own kind, not a departure
        medians = {what: median_log_ratio(values) for what, values in logs.items()}
        far = {
            what: float(m) if m is not None and math.isfinite(m) and abs(m) >= bound else None
            for what, m in medians.items()
        }
        if far["grad"] is not None or far["ratio"] is not None:
            found.append((name, far["grad"], far["ratio"]))
    if not found:
        return
    names = tuple(name for name, _, _ in found)
    cause = GradientsDepartFromBaseline(
        baseline.source,
        len(pairs),
        FAR,
        names,
        tuple(gradient for _, gradient, _ in found),
        tuple(update for _, _, update in found),
    )
    yield ctx.finding("warning", names[0], cause, parameter_nodes(ctx, names), subjects=names)

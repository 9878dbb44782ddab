"""GA967 gradients-depart-from-baseline."""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.baseline import FAR, log_ratios, median_log_ratio, stopped
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.baseline import BaselineSamples, WatchBaseline
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Finding

_WHAT = {"grad": "gradient norm", "ratio": "update ratio"}


def _times(log: float) -> str:
    return f"{10**log:.3g}x larger" if log > 0 else f"{10 ** (-log):.3g}x smaller"


@register(
    "GA967",
    "gradients-depart-from-baseline",
    severity="warning",
    needs=(TrainingRun, WatchBaseline, BaselineSamples),
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
    found: list[tuple[str, list[str]]] = []
    for there, name in enumerate(baseline.parameters):
        if name not in here:
            continue  # not in this run's optimizer: GA968's
        logs = {what: log_ratios(pairs, there, here[name], what) for what in _WHAT}
        if stopped(logs["ratio"]) is not None:
            continue  # it stopped training: GA968's
        medians = {what: median_log_ratio(values) for what, values in logs.items()}
        far = [
            f"{_WHAT[what]} {_times(m)}"
            for what, m in medians.items()
            if m is not None and math.isfinite(m) and abs(m) >= bound
        ]
        if far:
            found.append((name, far))
    if not found:
        return
    names = [name for name, _ in found]
    listing = "; ".join(f"{name}: {', '.join(far)}" for name, far in found[:5])
    yield ctx.finding(
        "warning",
        names[0],
        f"At the {len(pairs)} steps sampled in both runs, {len(found)} parameter(s) got gradients or "
        f"updates {FAR:g}x or more away from the baseline's ({baseline.source}), at the median: {listing}"
        f"{'; ...' if len(found) > 5 else ''}.",
        "Compare this run's recipe with the baseline's: larger updates, the learning rate, its schedule "
        "(a warm-up dropped), the loss scale or the loss's reduction (sum for mean); smaller gradients, "
        "what lies between these parameters and the loss (an activation, a detached branch, a scale).",
        parameter_nodes(ctx, names),
        subjects=tuple(names),
    )

"""GA957 update-ratio-too-small."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.curves import RATIO_TOO_SMALL
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import StepUpdates, TrainingRun
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class UpdatesTooSmall(Cause):
    """Layers whose weights move by less than a millionth of their size each step, at the median over the run."""

    names_subjects = True
    names: tuple[str, ...]
    ratios: tuple[float, ...]  # each one's median update-to-weight ratio ‖Δw‖/‖w‖
    bound: float

    def message(self) -> str:
        moved = listing(f"{name} {ratio:.3g}" for name, ratio in zip(self.names, self.ratios))
        return (
            f"{counted(len(self.names), 'layer')} barely {'moves' if len(self.names) == 1 else 'move'}: median "
            f"‖Δw‖/‖w‖ {moved} (bound {self.bound:g}; a healthy ratio is about 1e-3)."
        )

    def fix(self) -> str:
        return (
            "Raise the learning rate (for these layers, with a parameter group); check the schedule does not "
            "decay it to nothing."
        )


@register(
    "GA957",
    "update-ratio-too-small",
    severity="warning",
    needs=(TrainingRun, StepUpdates),
    causes=(UpdatesTooSmall,),
    once="one finding per watched run: every layer whose updates are too small is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Over the run, a layer's weights move by less than a millionth of their size per step.

    What it does:
        At every sampled step of a watched run, measures each weight matrix or kernel's
        update-to-weight ratio ``‖Δw‖/‖w‖`` and reports the layers whose median ratio is
        positive but below 1e-6 (the bound of the probe's GA909). Layers that never move at
        all are GA960's.

    Why is this bad:
        A healthy ratio is near 1e-3 (Karpathy, CS231n). A thousand times less, a layer needs
        a thousand times the steps to learn the same: the loss crawls (the accuracy guide's
        §2, learning rate too small), or the layer is as good as frozen.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=1e-8)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.05)
        ```
    """
    record = ctx.need(TrainingRun).record
    found: list[tuple[str, float]] = []
    for position in record.matrices():
        ratios = [r for s in ctx.need(StepUpdates).samples if (r := s.ratio(position)) is not None]
        if len(ratios) >= 3 and 0.0 < statistics.median(ratios) < RATIO_TOO_SMALL:
            found.append((record.parameters[position], statistics.median(ratios)))
    if not found:
        return
    names = tuple(name for name, _ in found)
    cause = UpdatesTooSmall(names, tuple(float(ratio) for _, ratio in found), RATIO_TOO_SMALL)
    yield ctx.finding("warning", names[0], cause, parameter_nodes(ctx, names), subjects=names)

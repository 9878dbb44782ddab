"""GA956 update-ratio-too-large."""

from __future__ import annotations

import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.curves import RATIO_TOO_LARGE
from graphaudit.checks._shared.watch import parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import StepUpdates, TrainingRun
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing, pronouns


@dataclass(frozen=True)
class UpdatesTooLarge(Cause):
    """Layers whose weights move by more than their own size each step, at the median over the run."""

    names_subjects = True
    names: tuple[str, ...]
    ratios: tuple[float, ...]  # each one's median update-to-weight ratio ‖Δw‖/‖w‖
    bound: float

    def message(self) -> str:
        they = pronouns(len(self.names))
        moved = listing(f"{name} {ratio:.3g}" for name, ratio in zip(self.names, self.ratios))
        return (
            f"{counted(len(self.names), 'layer')} {'moves' if len(self.names) == 1 else 'move'} by more than "
            f"{they.possessive} own size each step: median ‖Δw‖/‖w‖ {moved} (bound {self.bound:g}; a healthy "
            "ratio is about 1e-3)."
        )

    def fix(self) -> str:
        return "Lower the learning rate (for these layers, with a parameter group), or add a warm-up."


@register(
    "GA956",
    "update-ratio-too-large",
    severity="warning",
    needs=(TrainingRun, StepUpdates),
    causes=(UpdatesTooLarge,),
    once="one finding per watched run: every layer whose updates are too large is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Over the run, a layer's weights move by more than their own size at each step.

    What it does:
        At every sampled step of a watched run, compares each weight matrix or kernel before
        and after the update: the update-to-weight ratio ``‖Δw‖/‖w‖``. It reports the layers
        whose median ratio over the run is above 1 (the bound of the probe's GA908).

    Why is this bad:
        Karpathy's rule of thumb (CS231n "Neural Networks Part 3") puts a healthy ratio near
        1e-3. Above 1, every step replaces the weights rather than nudging them: the loss
        oscillates or diverges (the accuracy guide's §2, learning rate too large), and the
        layer learns nothing stable.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=20.0)
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
        if len(ratios) >= 3 and statistics.median(ratios) > RATIO_TOO_LARGE:
            found.append((record.parameters[position], statistics.median(ratios)))
    if not found:
        return
    names = tuple(name for name, _ in found)
    cause = UpdatesTooLarge(names, tuple(float(ratio) for _, ratio in found), RATIO_TOO_LARGE)
    yield ctx.finding("warning", names[0], cause, parameter_nodes(ctx, names), subjects=names)

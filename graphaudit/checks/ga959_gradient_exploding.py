"""GA959 gradient-exploding."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.watch import GRADIENT_GROWTH
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import WatchedGradients
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class GradientsExploding(Cause):
    """The norm of the whole gradient grew far above its first sampled value over the run."""

    first_step: int  # the first sampled step
    first_norm: float  # the gradient's norm there
    peak_step: int  # the sampled step of its largest norm
    peak_norm: float
    bound: float  # the growth above which it explodes

    def message(self) -> str:
        return (
            f"The gradients explode: their norm grew from {self.first_norm:.3g} at step {self.first_step} to "
            f"{self.peak_norm:.3g} at step {self.peak_step}, {self.peak_norm / self.first_norm:.3g} times (bound "
            f"{self.bound:g})."
        )

    def fix(self) -> str:
        return (
            "Lower the learning rate, clip the gradients (ops.clip_by_global_norm), and normalise the inputs."
        )


@register(
    "GA959",
    "gradient-exploding",
    severity="warning",
    needs=(WatchedGradients,),
    causes=(GradientsExploding,),
    once="one finding per watched run: the norm of its whole gradient",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Over the run, the gradient's norm grew ten thousand times above its first value.

    What it does:
        At every sampled step of a watched run, takes the norm of the whole gradient the
        optimizer got, and reports a run where it grew more than 1e4 times above the first
        sampled step's (the relative bound of the probe's GA911). A gradient that is already
        NaN or Inf is GA950's.

    Why is this bad:
        MindInsight's debugger watchpoint "gradient explosion": gradients that grow step after
        step mean updates that feed themselves — a learning rate above the curvature's
        stability limit (2/λ_max for SGD), or a recurrence whose weights amplify. The loss
        turns NaN soon after.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.5)  # on unnormalised inputs
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.01)  # and clip_by_global_norm
        ```
    """
    samples = ctx.need(WatchedGradients).samples
    totals = []
    for sample in samples:
        norms = [n for n in sample.grad_norms if n is not None]
        total = math.sqrt(sum(n * n for n in norms)) if norms else math.nan
        if not math.isfinite(total):
            break
        totals.append((sample.step, total))
    if len(totals) < 2 or totals[0][1] <= 0:
        return
    step, peak = max(totals, key=lambda t: t[1])
    growth = peak / totals[0][1]
    if growth <= GRADIENT_GROWTH:
        return
    cause = GradientsExploding(
        int(totals[0][0]), float(totals[0][1]), int(step), float(peak), GRADIENT_GROWTH
    )
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

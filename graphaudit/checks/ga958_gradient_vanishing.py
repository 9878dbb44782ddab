"""GA958 gradient-vanishing."""

from __future__ import annotations

import math
import statistics
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.watch import GRADIENT_VANISHING, parameter_nodes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun, WatchedGradients
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class GradientsVanishing(Cause):
    """Layers whose RMS gradient is, at the median of the sampled steps, a sliver of the strongest layer's."""

    names_subjects = True
    names: tuple[str, ...]
    fractions: tuple[float, ...]  # each one's median RMS gradient as a fraction of the strongest layer's
    samples: int  # the sampled steps
    bound: float

    def message(self) -> str:
        fractions = listing(f"{name} {fraction:.2g}" for name, fraction in zip(self.names, self.fractions))
        return (
            f"The gradients vanish in {counted(len(self.names), 'layer')}: their RMS gradient is, at the median "
            f"of {self.samples} sampled steps, this fraction of the strongest layer's: {fractions} (bound "
            f"{self.bound:g})."
        )

    def fix(self) -> str:
        return (
            "Use non-saturating activations (ReLU, GELU), normalisation (BatchNorm, LayerNorm) or residual "
            "connections; check the initialisation of these layers."
        )


@register(
    "GA958",
    "gradient-vanishing",
    severity="warning",
    needs=(TrainingRun, WatchedGradients),
    causes=(GradientsVanishing,),
    once="one finding per watched run: every layer with vanishing gradients is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Over the run, some layers get gradients a hundred thousand times weaker than the strongest layer's.

    What it does:
        At every sampled step of a watched run, takes the root-mean-square gradient of each
        weight matrix or kernel (``‖g‖/√n``) relative to the largest one of that step, and
        reports the layers whose median relative gradient is positive but below 1e-5 (the
        bound of the probe's GA910). Exactly zero gradients are GA960's.

    Why is this bad:
        MindInsight's debugger watchpoint "gradient vanishing": a layer whose gradient is that
        much weaker barely learns while the rest of the network does — the classic symptom of
        deep stacks of saturating activations (sigmoid, tanh) without normalisation or
        residual connections, or of a part of the graph behind a near-zero multiplier.

    Example:
        ```python
        layers = [nn.Dense(32, 32), nn.Sigmoid()] * 12
        ```

    Use instead:
        ```python
        layers = [nn.Dense(32, 32), nn.ReLU()] * 12  # or BatchNorm / residual connections
        ```
    """
    record = ctx.need(TrainingRun).record
    samples = ctx.need(WatchedGradients).samples
    matrices = record.matrices()
    relative: dict[int, list[float]] = {p: [] for p in matrices}
    for sample in samples:
        rms = {p: sample.grad_norms[p] / math.sqrt(max(record.sizes[p], 1)) for p in matrices}
        finite = [v for v in rms.values() if v is not None and math.isfinite(v)]
        top = max(finite, default=0.0)
        if top <= 0:
            continue
        for p, value in rms.items():
            if value is not None and math.isfinite(value):
                relative[p].append(value / top)
    found = [
        (record.parameters[p], statistics.median(v))
        for p, v in relative.items()
        if len(v) >= 3 and 0.0 < statistics.median(v) < GRADIENT_VANISHING
    ]
    if not found:
        return
    names = tuple(name for name, _ in found)
    cause = GradientsVanishing(
        names, tuple(float(fraction) for _, fraction in found), len(samples), GRADIENT_VANISHING
    )
    yield ctx.finding("warning", names[0], cause, parameter_nodes(ctx, names), subjects=names)

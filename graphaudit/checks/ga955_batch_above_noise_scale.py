"""GA955 batch-above-noise-scale."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.watch import FAR_ABOVE_NOISE_SCALE, noise_scale
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import GradientNoise
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class BatchAboveNoiseScale(Cause):
    """The batch size is far above the simple gradient noise scale measured on the run."""

    batch_size: int
    noise_scale: float  # B_simple = tr(Σ)/|G|²
    trace: float  # the estimate of tr(Σ)
    grad_sq: float  # the estimate of |G|²
    windows: int  # the windows of sampled gradients it was estimated from

    def message(self) -> str:
        return (
            f"The batch size {self.batch_size} is {self.batch_size / max(self.noise_scale, 1e-12):.3g} times the "
            f"gradient noise scale B_simple = tr(Σ)/|G|² = {self.trace:.3g}/{self.grad_sq:.3g} = "
            f"{self.noise_scale:.3g} measured on this run ({self.windows} windows of sampled gradients): far "
            "above it, larger batches cost examples without saving steps, and may generalise worse."
        )

    def fix(self) -> str:
        low, high = max(1, round(self.noise_scale)), max(2, round(FAR_ABOVE_NOISE_SCALE * self.noise_scale))
        return (
            f"Try a batch near {low}-{high} with the learning rate scaled down in proportion, or keep the batch "
            "for throughput knowing the examples per step beyond it are mostly wasted."
        )


@register(
    "GA955",
    "batch-above-noise-scale",
    severity="warning",
    needs=(GradientNoise,),
    causes=(BatchAboveNoiseScale,),
    once="one finding per watched run: its batch size against the measured noise scale",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The batch size is far above the gradient noise scale measured on the run: larger batches buy nothing.

    What it does:
        Estimates the simple gradient noise scale ``B_simple = tr(Σ)/|G|²`` of McCandlish et
        al. (2018, "An Empirical Model of Large-Batch Training") from the gradients the watch
        sampled: each window of 5 sampled steps gives |G|² at batch B (the mean of |g|²) and
        at 5B (the squared norm of the mean), their unbiased estimates of |G|² and tr(Σ) are
        averaged over the windows, and the batch size is compared with the ratio. It reports
        a batch size more than 10 times B_simple.

    Why is this bad:
        The accuracy guide (§2, batch size too large): "batch size过大时, 模型可能不能收敛到较优
        的极小值上, 从而降低模型的泛化能力" — a batch too large may not reach a good minimum
        and generalises worse. McCandlish et al. show the noise scale is the batch size past
        which extra examples per step stop saving steps: at B = 10 B_noise a run needs about
        as many steps as with an infinite batch, but 11 times the examples of the most
        data-efficient batch (their eq. 2.11-2.12). The gradients of a run are sampled steps
        apart, so the estimate errs towards more noise (fewer alarms).

    Example:
        ```python
        data = data.batch(1024)  # on a problem whose noise scale is 20
        ```

    Use instead:
        ```python
        data = data.batch(32)  # and scale the learning rate down with it
        ```
    """
    noise = ctx.need(GradientNoise)
    estimate = noise_scale(noise.windows, noise.batch_size)
    if estimate is None:
        return
    simple, trace, grad_sq = estimate
    if noise.batch_size <= FAR_ABOVE_NOISE_SCALE * max(simple, 0.0):
        return
    cause = BatchAboveNoiseScale(
        int(noise.batch_size), float(simple), float(trace), float(grad_sq), len(noise.windows)
    )
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

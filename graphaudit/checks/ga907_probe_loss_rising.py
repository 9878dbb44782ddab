"""GA907 probe-loss-rising."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.curves import (
    DIVERGES,
    DIVERGES_FROM,
    RISE,
    SPIKE,
    curve_values,
    curve_words,
    finite_losses,
    loss_trend,
)
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe_curve import ProbeCurve
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class LossRising(Cause):
    """A loss that rose over the probe's training steps on one batch (ended higher, or spiked)."""

    losses: tuple[float | str, ...]  # the loss of each step (a non-finite one as its word)
    skipped: tuple[int, ...]  # the positions of the steps whose update was skipped

    @property
    def applied(self) -> list[float]:
        """The losses of the steps that updated (all finite: a curve that rises has no NaN)."""
        return [float(loss) for i, loss in enumerate(self.losses) if i not in self.skipped]

    @property
    def diverges(self) -> bool:
        """The loss reached 1000 times the first or more: training diverges."""
        losses = self.applied
        return losses[0] >= DIVERGES_FROM and max(losses) >= DIVERGES * losses[0]

    def message(self) -> str:
        losses = self.applied
        grew = losses[-1] / losses[0] if losses[0] > 0 else float("inf")
        how = (
            (
                f"it ended {grew - 1:+.0%} from the first step"
                if grew < 10
                else f"it ended {grew:.3g} times the first step's"
            )
            if losses[-1] > losses[0] * (1 + RISE)
            else f"it reached {max(losses[1:]) / losses[0]:.3g} times the first step's (more than {SPIKE:g}x)"
        )
        return (
            f"The loss rose over {len(self.losses)} training steps on the same batch: {how} "
            f"(loss per step: {curve_words(self.losses, self.skipped)}). "
            + (
                f"A loss {DIVERGES:g} times the first or more is training diverging: "
                if self.diverges
                else "Steps that overshoot like this mean "
            )
            + "the learning rate is too large for this network, or the gradients explode."
        )

    def fix(self) -> str:
        return (
            "Lower the learning rate (by 10x to start with), add a warm-up, or clip the gradients "
            "(ops.clip_by_global_norm)."
        )


@register(
    "GA907",
    "probe-loss-rising",
    severity="warning",
    also=("error",),
    needs=(ProbeCurve,),
    confirms=("GA908", "GA721"),
    covered_by="cells",
    keeps_message="both",
    direction="too large",  # the rate: never folded into a GA721 rate below its range
    once="one finding per probe run: its one loss curve",
    causes=(LossRising,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The loss rises or jumps up over several real steps on one batch: the learning rate is too large.

    What it does:
        Runs N training steps on the same batch (``probe=N``, N >= 3) and reports when the
        last loss ends more than 10% above the first, or some step's loss is more than twice
        the first (an oscillation that overshoots). The finding gives the loss curve. It is an
        error when some step's loss is a thousand times the first or more (from a first loss
        of at least 1e-3): that is training measured diverging on the user's own batch at the
        user's own rate, not a risk of it; a warning otherwise.

    Why is this bad:
        On one repeated batch gradient descent with a sane learning rate lowers the loss; a
        loss that climbs or swings is the signature of steps that overshoot the minimum (the
        article's §2: a learning rate too large makes the loss oscillate instead of
        converging). Measured on MindSpore 2.10: a 3-layer MLP with SGD(10) goes 1.39, 1.23,
        4.45, 469, 1.6e8; with Adam(1) it jumps to 2588 at the second step. A well-tuned
        resnet18 overfitting 2 images may bounce between 1e-4 and 0.08, far below its first
        loss of 7.8: that is not reported. Dropout's new masks make the loss noisy, hence a
        warning below a thousandfold rise; SGD(1e4) on the same MLP goes 1.4 to 5e25 in five
        steps and to NaN at the seventh: an error (GA721's rate then reads as one too).

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=10.0)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
        ```
    """
    curve = ctx.need(ProbeCurve)
    if loss_trend(finite_losses(curve.steps)) != "rises":
        return
    cause = LossRising(*curve_values(curve.steps))
    yield ctx.finding("error" if cause.diverges else "warning", "(root)", cause, (g.cell_node(""),))

"""GA906 probe-loss-not-decreasing."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.curves import FLAT, curve_values, curve_words, finite_losses, loss_trend
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe_curve import ProbeCurve
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class LossNotDecreasing(Cause):
    """A loss that did not fall over the probe's training steps on one batch."""

    losses: tuple[float | str, ...]  # the loss of each step (a non-finite one as its word)
    skipped: tuple[int, ...]  # the positions of the steps whose update was skipped
    change: float  # the best relative change from the first loss
    flat: float  # the relative fall below which a loss is flat

    def message(self) -> str:
        return (
            f"The loss did not fall over {len(self.losses)} training steps on the same batch "
            f"(loss per step: {curve_words(self.losses, self.skipped)}; best change {self.change:+.2%}, less than "
            f"{self.flat:.1%}). A network that cannot overfit one batch has a bug or a learning rate far too small."
        )

    def fix(self) -> str:
        return (
            "Check that the loss is computed from the network's output (not a detached or constant "
            "tensor), that the label is the right one, that the trainable parameters are in the "
            "optimizer's parameter list, and raise the learning rate (10x at a time). Probe with more steps "
            "(probe=20) before concluding."
        )


@register(
    "GA906",
    "probe-loss-not-decreasing",
    severity="warning",
    needs=(ProbeCurve,),
    causes=(LossNotDecreasing,),
    once="one finding per probe run: its one loss curve",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The loss does not fall over several real steps on one batch: the network cannot even overfit it.

    What it does:
        Runs N training steps on the same batch (``audit(..., probe=5, inputs=..., label=...)``,
        N >= 3) and reports when no step brings the loss more than 0.1% below the first step's
        loss (and the loss is not already about 0). The finding gives the loss curve.

    Why is this bad:
        A network that cannot fit a single batch has a bug (the output detached from the loss,
        the wrong label, a frozen network) or a learning rate far too small; it is the first
        sanity check of Karpathy's "A Recipe for Training Neural Networks" ("overfit one
        batch"). Repeating the same batch removes the noise between batches: a working setup
        lowers the loss at once (measured: a 3-layer MLP with SGD(0.1) falls 0.9% in 5 steps,
        with Adam(1e-2) 35%; mindcv resnet18 with Momentum(0.1) from 7.8 to 0). Dropout still
        draws new masks at every step, and a very small fine-tuning rate can move the loss
        less than 0.1% in a few steps: hence a warning.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=1e-7)
        graphaudit.audit(net, optimizer, inputs=x, label=y, loss_fn=loss, probe=5)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.1)
        ```
    """
    curve = ctx.need(ProbeCurve)
    if loss_trend(finite_losses(curve.steps)) != "flat":
        return
    losses = finite_losses(curve.steps)
    change = (min(losses[1:]) - losses[0]) / abs(losses[0])
    cause = LossNotDecreasing(*curve_values(curve.steps), float(change), FLAT)
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

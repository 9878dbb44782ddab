"""GA951 loss-diverging."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.watch import loss_curve
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import TrainingRun
from graphaudit.findings import Finding

RISE = 0.10  # a rise this much above the start, beyond the noise, is divergence


@register(
    "GA951",
    "loss-diverging",
    severity="error",
    also=("warning",),
    needs=(TrainingRun,),
    once="one finding per watched run: its one loss curve",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The training loss rises or oscillates over the real run: the learning rate is too large.

    What it does:
        Compares the median loss of the last fifth of the watched run with that of the first
        fifth, against the run's own step-to-step noise (see ``docs/watch.md``): a loss that
        ended more than 10% and three standard errors above where it started is diverging
        (error); one that did not fall beyond its noise while that noise, at the end, is
        more than half the loss itself is oscillating (warning).

    Why is this bad:
        The accuracy guide (§2, learning rate too large): "学习率过大, 会导致loss震荡, 不能收敛
        到预期值" — a learning rate too large makes the loss oscillate and never converge to
        the value it should reach. Each update overshoots the minimum it aims at.

    Example:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=3.0)
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), learning_rate=0.05)
        ```
    """
    curve = loss_curve(ctx.need(TrainingRun).record.losses)
    if curve is None:
        return
    rise = -curve.fall
    what = (
        f"from a median of {curve.head:.4g} over its first {curve.window} steps to {curve.tail:.4g} over its "
        f"last {curve.window} (step-to-step noise {curve.sigma:.3g})"
    )
    fix = "Lower the learning rate (by 3-10x), or add a warm-up; clip the gradients if single steps spike."
    if rise > max(3 * curve.standard_error, RISE * abs(curve.head)):
        yield ctx.finding(
            "error", "(root)", f"The training loss diverged: it rose {what}.", fix, (g.cell_node(""),)
        )
        return
    if curve.oscillates:
        yield ctx.finding(
            "warning",
            "(root)",
            f"The training loss oscillates without falling: it went {what}; at the end it jumps by "
            f"{curve.sigma_tail:.3g} from step to step.",
            fix,
            (g.cell_node(""),),
        )

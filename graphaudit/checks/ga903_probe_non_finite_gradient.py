"""GA903 probe-non-finite-gradient."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class NonFiniteGradient(Cause):
    """Trainable parameters whose gradients hold NaN or Inf values after one training step."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    note: str  # a lone parameter's Parameter.name, when it differs from its path
    nan: int  # NaN values over all their gradients
    inf: int  # Inf values
    loss: str | None  # the loss, when it is not finite itself: "nan", "inf" or "-inf"

    def message(self) -> str:
        kinds = listing(f"{count} {what}" for count, what in ((self.nan, "NaN"), (self.inf, "Inf")) if count)
        loss_note = f" The loss itself is {self.loss}." if self.loss is not None else ""
        what = (
            f"The gradient of {self.names[0]}{self.note} has"
            if len(self.names) == 1
            else f"The gradients of {len(self.names)} parameters ({listing(self.names)}) have"
        )
        return (
            f"{what} non-finite values ({kinds}) after one training step.{loss_note} "
            "One such step turns the weights into NaN/Inf and training silently diverges."
        )

    def fix(self) -> str:
        return (
            "Find the operation that produces NaN/Inf: log, sqrt or division of zero or negative values, "
            "exp overflow, a loss fed values outside its domain; guard it (ops.clamp, an epsilon, "
            "log_softmax instead of log(softmax)), check the batch for NaN, and lower the learning rate or "
            "use loss scaling for float16."
        )


@register(
    "GA903", "probe-non-finite-gradient", severity="error", needs=(ProbeStep,), causes=(NonFiniteGradient,)
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter whose gradient has NaN or Inf values on the probe batch.

    What it does:
        Computes the gradients of one training step and reports each trainable parameter with
        NaN or Inf values in its gradient, with their counts (and the loss when it is not finite).

    Why is this bad:
        One NaN gradient makes every weight NaN after the update: the loss becomes NaN a few
        steps into training, far from its cause (a ``log`` of a non-positive value, a division
        by zero, an overflow in float16).

    Example:
        ```python
        def construct(self, x):
            return ops.log(self.fc(x))  # negative inputs give NaN
        ```

    Use instead:
        ```python
        def construct(self, x):
            return ops.log(ops.softplus(self.fc(x)) + 1e-6)
        ```
    """
    step = ctx.need(ProbeStep)
    bad = [p for p in step.parameters if p.requires_grad and p.grad_finite is False]
    if not bad:
        return
    # One cause, one finding: one operation that makes NaN/Inf poisons every gradient behind it.
    cause = NonFiniteGradient(
        tuple(p.subject for p in bad),
        bad[0].named_as if len(bad) == 1 else "",
        int(sum(p.grad_nan for p in bad)),
        int(sum(p.grad_inf for p in bad)),
        None if math.isfinite(step.loss) else f"{step.loss:g}",
    )
    [group] = one_group(ctx, [p.node for p in bad])  # the cell holding them all
    yield ctx.finding("error", group.subject, cause, tuple(p.node for p in bad), subjects=cause.names)

"""GA903 probe-non-finite-gradient."""

from __future__ import annotations

import math
from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding


@register("GA903", "probe-non-finite-gradient", severity="error", needs=(ProbeStep,))
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
    for p in step.parameters:
        if not p.requires_grad or p.grad_finite is not False:
            continue
        kinds = ", ".join(
            f"{count} {what}" for count, what in ((p.grad_nan, "NaN"), (p.grad_inf, "Inf")) if count
        )
        loss_note = f" The loss itself is {step.loss:g}." if not math.isfinite(step.loss) else ""
        yield ctx.finding(
            "error",
            p.subject,
            f"The gradient of {p.subject}{p.named_as} has non-finite values ({kinds}) after one training step.{loss_note} "
            "One such step turns the weights into NaN/Inf and training silently diverges.",
            "Find the operation that produces NaN/Inf: log, sqrt or division of zero or negative values, "
            "exp overflow, a loss fed values outside its domain; guard it (ops.clamp, an epsilon, "
            "log_softmax instead of log(softmax)), check the batch for NaN, and lower the learning rate or "
            "use loss scaling for float16.",
            (p.node,),
        )

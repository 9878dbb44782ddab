"""GA901 probe-trainable-did-not-change."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding


@register(
    "GA901",
    "probe-trainable-did-not-change",
    severity="error",
    also=("warning",),
    needs=(ProbeStep,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the optimizer should train that one real step left bit-identical.

    What it does:
        Runs one training step (``audit(..., probe=True, inputs=(x, y))``) and reports each
        parameter with ``requires_grad=True`` in the optimizer that did not change at all.
        It is a warning when the gradient was not zero but the update vanished in float
        rounding (a bias right before a BatchNorm), an error otherwise.

    Why is this bad:
        The static checks read the optimizer's list; only a real step shows that a parameter
        in it gets no update: a branch whose output is multiplied by zero or never used, a
        ``stop_gradient`` in the way, a learning rate of zero for its group.

    Example:
        ```python
        def construct(self, x):
            return self.fc(x) + self.aux(x) * 0.0  # aux never learns
        ```

    Use instead:
        ```python
        def construct(self, x):
            return self.fc(x) + self.aux(x)
        ```
    """
    for p in ctx.need(ProbeStep).parameters:
        if not (p.in_optimizer and p.requires_grad and not p.changed):
            continue
        name, lr = p.subject, p.learning_rate
        severity = "error"
        if p.grad_zero:
            cause = "its gradient is exactly zero (see GA904)"
            fix = (
                f"Make {name} reach the loss (see GA904), or freeze it explicitly: requires_grad=False and "
                "leave it out of the optimizer."
            )
        elif lr == 0.0:
            cause = "its learning rate is 0"
            fix = f"Give {name}'s parameter group a non-zero learning rate, or freeze it explicitly."
        else:
            severity = "warning"  # the step ran; the update vanished in float rounding
            cause = (
                f"its gradient (norm {_g(p.grad_norm)}, learning rate {_g(lr)}) gives an update below the float "
                "resolution of its values. A gradient that is only rounding noise is what a bias followed "
                "by BatchNorm or LayerNorm gets: the normalisation cancels it"
            )
            fix = (
                f"If {name} is a bias right before a normalisation layer, build that layer without it "
                "(has_bias=False); otherwise check the learning rate, loss scaling and gradient clipping."
            )
        yield ctx.finding(
            severity,
            name,
            f"{name}{p.named_as} is in the optimizer with requires_grad=True, but one training step left it bit-identical: {cause}.",
            fix,
            (p.node,),
        )


def _g(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3g}"

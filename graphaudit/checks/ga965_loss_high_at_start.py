"""GA965 loss-high-at-start."""

from __future__ import annotations

import math
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.training import Sample, StartLoss
from graphaudit.findings import Cause, Finding

# Measured first losses of healthy starts, as multiples of ln C (docs/watch.md, "A sane start"):
# MindSpore's default Dense init 0.98-1.00x, a 10-layer ReLU MLP in He-normal init 1.42x,
# mindcv's resnet18 1.16x and mobilenet_v3_small 1.01x. Weights 2x too large: 540x.
WARNING_TIMES = 3.0  # softmax logits of standard deviation ~3 at C=10 (loss ~ ln C + s^2/2)
ERROR_TIMES = 10.0


def _norms(sample: Sample | None) -> tuple[float | None, float | None]:
    """The norms of the whole gradient and of all the weights at *sample* (``None`` when not all known)."""
    if sample is None or sample.grad_norms is None:
        return None, None
    grads = [n for n in sample.grad_norms if n is not None and math.isfinite(n)]
    weights = [n for n in sample.weight_norms if math.isfinite(n)]
    if not grads or not weights:
        return None, None
    return float(math.hypot(*grads)), float(math.hypot(*weights))


@dataclass(frozen=True)
class LossHighAtStart(Cause):
    """The run's first loss was far above what a uniform guess scores under its loss function."""

    loss: float  # the first step's loss
    chance: float  # a uniform guess's loss
    chance_what: str  # what that loss is (the loss function and the classes)
    bound: float  # how many times the guess's loss is too high
    grad_norm: float | None = None  # the norm of the first step's whole gradient, when known
    weight_norm: float | None = None  # ... and of the weights then

    def message(self) -> str:
        norms = ""
        if self.grad_norm is not None and self.weight_norm is not None:
            norms = f" At that step the gradient's norm was {self.grad_norm:.3g} against the weights' {self.weight_norm:.3g}."
        return (
            f"The run's first loss was {self.loss:.4g}, {self.loss / self.chance:.3g} times what a uniform guess "
            f"scores ({self.chance:.3g} under {self.chance_what}; bound {self.bound:g}x).{norms}"
        )

    def fix(self) -> str:
        return (
            "Check the initialisation: weights of the scale their layers expect (HeNormal/HeUniform for ReLU, "
            "XavierUniform for tanh or sigmoid), a last layer initialised small, inputs normalised; the "
            "first loss should then be near ln(number of classes)."
        )


@register(
    "GA965",
    "loss-high-at-start",
    severity="error",
    also=("warning",),
    needs=(StartLoss,),
    causes=(LossHighAtStart,),
    once="one finding per watched run: its first loss",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The run's first loss is far above a uniform guess's: the network starts confidently wrong.

    What it does:
        Compares the loss of a watched run's first step with what a uniform guess scores
        under its loss function: ``ln C`` for MindSpore's softmax cross-entropies over ``C``
        classes (the network's output width, read from one isolated forward pass of the first
        batch), ``ln 2`` for its binary ones. Above 3 times that it warns, above 10 times it is
        an error. Healthy starts measured 0.98-1.42 times ``ln C`` (``docs/watch.md``).

    Why is this bad:
        A network initialised as its layers expect predicts close to uniformly at first;
        "verify loss @ init" is the first step of Karpathy's "A Recipe for Training Neural
        Networks" (2019), and CS231n's first sanity check is the loss at chance performance
        (2.302 for 10 classes). A first loss far above it means outputs of a huge scale:
        weights initialised too large, inputs not normalised, or a last layer that is not
        scaled down. The first steps then only undo the initialisation (the "hockey stick"),
        gradients are huge, and deep networks may never recover (the accuracy guide's
        initialisation section).

    Example:
        ```python
        dense.weight.set_data(initializer(Normal(sigma=6 * math.sqrt(2 / fan_in)), dense.weight.shape))
        ```

    Use instead:
        ```python
        dense.weight.set_data(initializer(HeNormal(), dense.weight.shape))  # the scale ReLU layers expect
        ```
    """
    start = ctx.need(StartLoss)
    times = start.loss / start.chance.loss
    if times <= WARNING_TIMES:
        return
    severity = "error" if times > ERROR_TIMES else "warning"
    cause = LossHighAtStart(
        float(start.loss), float(start.chance.loss), start.chance.what, WARNING_TIMES, *_norms(start.first)
    )
    yield ctx.finding(severity, "(root)", cause, (g.cell_node(""),))

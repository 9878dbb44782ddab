"""GA911 probe-exploding-gradient."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.curves import EXPLODING, EXPLODING_RELATIVE, depth_profile
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class ExplodingGradient(Cause):
    """Relative gradients that explode: one weight's ‖g‖/‖w‖ too large, or growing too much through the depth."""

    names_subjects = True
    worst: str  # the weight with the largest ‖g‖/‖w‖
    worst_relative: float
    inner: str  # the weight nearest the input
    outer: str  # the weight nearest the output
    inner_relative: float
    outer_relative: float
    ratio: float  # the profile's inner over outer ratio
    relative_bound: float  # the ‖g‖/‖w‖ above which one weight's gradient explodes
    ratio_bound: float  # the ratio above which gradients explode through the depth

    def message(self) -> str:
        return (
            f"The gradients explode: the relative gradient ‖g‖/‖w‖ reaches {self.worst_relative:.3g} at "
            f"{self.worst} (bound {self.relative_bound:g}), and goes from {self.outer_relative:.3g} at "
            f"{self.outer} (output side) to {self.inner_relative:.3g} at {self.inner} (input side), a ratio "
            f"of {self.ratio:.3g} (bound {self.ratio_bound:g})."
        )

    def fix(self) -> str:
        return (
            "Initialise the weights for the activation (HeNormal/HeUniform for ReLU, not a fixed large "
            "Normal), add normalisation or residual connections, and clip the gradients "
            "(ops.clip_by_global_norm) if the architecture needs it."
        )


@register(
    "GA911",
    "probe-exploding-gradient",
    severity="warning",
    needs=(ProbeStep,),
    causes=(ExplodingGradient,),
    once="one finding per network: the gradient profile from its output to its input",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Gradients grow by more than 1e5 from the output layers to the input layers, or dwarf the weights.

    What it does:
        From the probe's first step that updated, computes each weight's relative gradient
        ``‖g‖/‖w‖`` ordered from the input to the output, and reports when the input side is
        more than 1e5 times the output side, or some weight's gradient is more than 1e4
        times its own norm.

    Why is this bad:
        A gradient 1e4 times the weight moves it by far more than its size at any usual
        learning rate, and growth through the depth compounds at every layer: the loss jumps
        to huge values or NaN (GA907, GA912), float16 overflows (GA913). MindInsight's
        debugger watches the same condition, "gradient exploding". Measured on MindSpore
        2.10: healthy networks stay below 200 (resnet18's first convolution 57,
        mobilenet_v2's largest 164, on a batch of 2) and their input/output ratio below 200;
        a 10-layer ReLU MLP initialised with Normal(1.0) far exceeds both. A warning: one
        batch is one sample.

    Example:
        ```python
        layers = []
        for _ in range(10):
            layers += [nn.Dense(32, 32, weight_init=Normal(1.0)), nn.ReLU()]
        ```

    Use instead:
        ```python
        for _ in range(10):
            layers += [nn.Dense(32, 32, weight_init=HeNormal()), nn.ReLU()]
        ```
    """
    step = ctx.need(ProbeStep)
    first = next((s for s in step.steps if s.applied), None)
    if first is None:
        return
    profile = depth_profile(ctx, step.parameters, first)
    if not profile.exploding:
        return
    params = step.parameters
    top = max(range(len(profile.relative)), key=lambda i: profile.relative[i])
    worst = params[profile.positions[top]]
    inner, outer = params[profile.positions[0]], params[profile.positions[-1]]
    cause = ExplodingGradient(
        worst.subject,
        float(profile.relative[top]),
        inner.subject,
        outer.subject,
        float(profile.relative[0]),
        float(profile.relative[-1]),
        float(profile.ratio),
        EXPLODING_RELATIVE,
        EXPLODING,
    )
    yield ctx.finding(
        "warning",
        worst.subject,
        cause,
        tuple(dict.fromkeys((worst.node, inner.node, outer.node))),
        subjects=tuple(dict.fromkeys((worst.subject, inner.subject, outer.subject))),
    )

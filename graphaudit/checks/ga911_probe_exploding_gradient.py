"""GA911 probe-exploding-gradient."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.curves import EXPLODING, EXPLODING_RELATIVE, depth_profile
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.probe import ProbeStep
from graphaudit.findings import Finding


@register(
    "GA911",
    "probe-exploding-gradient",
    severity="warning",
    needs=(ProbeStep,),
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
    yield ctx.finding(
        "warning",
        worst.subject,
        f"The gradients explode: the relative gradient ‖g‖/‖w‖ reaches {profile.relative[top]:.3g} at "
        f"{worst.subject} (bound {EXPLODING_RELATIVE:g}), and goes from {profile.relative[-1]:.3g} at "
        f"{outer.subject} (output side) to {profile.relative[0]:.3g} at {inner.subject} (input side), a ratio "
        f"of {profile.ratio:.3g} (bound {EXPLODING:g}).",
        "Initialise the weights for the activation (HeNormal/HeUniform for ReLU, not a fixed large "
        "Normal), add normalisation or residual connections, and clip the gradients "
        "(ops.clip_by_global_norm) if the architecture needs it.",
        tuple(dict.fromkeys((worst.node, inner.node, outer.node))),
        subjects=tuple(dict.fromkeys((worst.subject, inner.subject, outer.subject))),
    )

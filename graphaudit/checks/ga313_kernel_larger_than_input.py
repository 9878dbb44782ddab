"""GA313 kernel-larger-than-input."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.geometry import convolutions
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Finding


@register(
    "GA313",
    "kernel-larger-than-input",
    severity="info",
    needs=(TracedPass,),
    once="one finding per network: every convolution whose kernel outgrows its input is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A convolution whose (dilated) kernel is larger than the feature map it runs on.

    What it does:
        Compares, for every convolution of the traced pass, its dilated kernel
        ``d·(k-1)+1`` with the spatial size of its input, and reports (as info) the
        convolutions whose kernel is larger than the map in some dim: a 3x3 kernel on a 2x2
        map, a 5x5 one on 2x2, a 7x7 one on 3x3. Convolutions on 1x1 maps are GA312's. One
        finding per network lists them all.

    Why is this bad:
        The taps that fall outside the map only ever see padding: those weights train on
        zeros, the layer costs what its kernel size says and computes what a smaller kernel
        would, and the receptive field the design counted on does not exist. It usually means
        the input is smaller than the network was designed for, or a stride too many before a
        large-kernel layer. A kernel larger than its input is one of NeuraLint's (TOSEM'21)
        shape rules. It is info, never a warning: correct networks audited at a smaller input
        than their design size show it everywhere (at 64x64, GoogLeNet's 5x5 branches and
        SKNet's dilated 3x3 run on 2x2 maps, ResNets' 3x3 on 2x2), and the rule cannot tell a
        small audit batch from a design error.

    Example:
        ```python
        self.body = nn.SequentialCell([nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(),
                                       nn.Conv2d(32, 64, 3, stride=2), nn.ReLU(),
                                       nn.Conv2d(64, 64, 7)])         # on 16x16 inputs: a 4x4 map
        ```

    Use instead:
        ```python
        self.body = nn.SequentialCell([nn.Conv2d(3, 32, 3, stride=2), nn.ReLU(),
                                       nn.Conv2d(32, 64, 3, stride=2), nn.ReLU(),
                                       nn.Conv2d(64, 64, 3)])
        ```
    """
    shown = [
        conv
        for conv in convolutions(ctx)
        if not conv.on_point and any(k > n for k, n in zip(conv.kernel, conv.size))
    ]
    if not shown:
        return
    first = shown[0]
    names = ", ".join(f"{c.layer.path} ({c.shown(c.kernel)} on {c.shown(c.size)})" for c in shown[:4])
    more = f" and {len(shown) - 4} more" if len(shown) > 4 else ""
    yield ctx.finding(
        "info",
        first.layer.path,
        f"{len(shown)} convolution{'s' if len(shown) != 1 else ''} run{'s' if len(shown) == 1 else ''} with a kernel "
        f"larger than the feature map: {names}{more}. The taps outside the map only multiply padding.",
        "Use a kernel no larger than the feature map, or feed the network the input size it was designed for.",
        [c.layer.call for c in shown],
        subjects=[c.layer.path for c in shown],
    )

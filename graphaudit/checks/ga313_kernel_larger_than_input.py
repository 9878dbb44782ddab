"""GA313 kernel-larger-than-input."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.geometry import convolutions, size_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class KernelLargerThanInput(Cause):
    """Convolutions whose (dilated) kernel is larger than the feature map they run on."""

    names_subjects = True
    convolutions: tuple[str, ...]  # their paths
    kernels: tuple[tuple[int, ...], ...]  # each one's dilated kernel
    sizes: tuple[tuple[int, ...], ...]  # each one's input map (spatial dims)

    def message(self) -> str:
        count = len(self.convolutions)
        shown = listing(
            f"{path} ({size_text(kernel)} on {size_text(size)})"
            for path, kernel, size in zip(self.convolutions, self.kernels, self.sizes)
        )
        return (
            f"{counted(count, 'convolution')} run{'s' if count == 1 else ''} with a kernel larger than the feature "
            f"map: {shown}. The taps outside the map only multiply padding."
        )

    def fix(self) -> str:
        return "Use a kernel no larger than the feature map, or feed the network the input size it was designed for."


@register(
    "GA313",
    "kernel-larger-than-input",
    severity="info",
    needs=(TracedPass,),
    once="one finding per network: every convolution whose kernel outgrows its input is listed in it",
    causes=(KernelLargerThanInput,),
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
    cause = KernelLargerThanInput(
        tuple(c.layer.path for c in shown),
        tuple(tuple(int(k) for k in c.kernel) for c in shown),
        tuple(tuple(int(n) for n in c.size) for c in shown),
    )
    yield ctx.finding(
        "info",
        shown[0].layer.path,
        cause,
        [c.layer.call for c in shown],
        subjects=[c.layer.path for c in shown],
    )

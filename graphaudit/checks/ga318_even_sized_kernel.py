"""GA318 even-sized-kernel."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.geometry import convolutions, size_text
from graphaudit.checks._shared.layers import _pair
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class EvenKernelOverlaps(Cause):
    """Convolutions with an even kernel that overlap their windows: each output sits half a pixel off the grid."""

    names_subjects = True
    convolutions: tuple[str, ...]
    kernels: tuple[tuple[int, ...], ...]  # each one's dilated kernel

    def message(self) -> str:
        shown = listing(
            f"{path} ({size_text(kernel)})" for path, kernel in zip(self.convolutions, self.kernels)
        )
        return (
            f"{counted(len(self.convolutions), 'convolution')} with an even kernel overlap their windows: {shown}. "
            "Each output sits half a pixel off the input grid."
        )

    def fix(self) -> str:
        return (
            "Use odd kernels (3x3, 5x5) for overlapping convolutions; keep even kernels for stride = kernel "
            "downsampling."
        )


@register(
    "GA318",
    "even-sized-kernel",
    severity="info",
    needs=(TracedPass,),
    once="one finding per network: every even-sized overlapping kernel is listed in it",
    causes=(EvenKernelOverlaps,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Convolutions with an even kernel (2x2, 4x4) that overlap their windows: the map shifts by half a pixel.

    What it does:
        Lists the (non-transposed) convolutions of the traced pass whose kernel is even in
        some dimension and whose stride there is smaller than the kernel, and reports them
        as info, once per network. A kernel equal to its stride (a 2x2 stride-2 downsampling,
        a ViT's 16x16 patch embedding) tiles the map without overlap and is not reported.

    Why is this bad:
        An even kernel has no centre tap: each output sits half a pixel off the input grid,
        and padding cannot be symmetric, so stacked layers shift the features towards one
        corner (Wu et al., "Convolution with Even-sized Kernels and Symmetric Padding",
        NeurIPS 2019, measure the lost accuracy). Odd kernels (3x3, 5x5) are the convention
        since VGG. It is info: it costs accuracy, it does not break training, and kernel
        shape is a design choice the research linters only flag as an inefficiency.

    Example:
        ```python
        nn.Conv2d(32, 64, kernel_size=4, pad_mode="same")
        ```

    Use instead:
        ```python
        nn.Conv2d(32, 64, kernel_size=3, pad_mode="same")
        ```
    """
    found = []
    for conv in convolutions(ctx):
        dims = len(conv.kernel)
        stride = _pair(getattr(conv.layer.cell, "stride", 1), dims)
        if any(k % 2 == 0 and k > 1 and s < k for k, s in zip(conv.kernel, stride)):
            found.append(conv)
    if not found:
        return
    cause = EvenKernelOverlaps(
        tuple(c.layer.path for c in found), tuple(tuple(int(k) for k in c.kernel) for c in found)
    )
    yield ctx.finding(
        "info",
        found[0].layer.path,
        cause,
        [c.layer.call for c in found],
        subjects=tuple(c.layer.path for c in found),
    )

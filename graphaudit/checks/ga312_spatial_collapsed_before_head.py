"""GA312 spatial-collapsed-before-head."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.geometry import convolutions, size_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing

#: Convolutions with a spatial kernel running on 1x1 maps from which the collapse is a warning.
WARN_LAYERS = 3


@dataclass(frozen=True)
class SpatialCollapsedBeforeHead(Cause):
    """Convolutions with a spatial kernel that still run on 1x1 maps after the map collapsed to 1x1."""

    names_subjects = True
    reducer: str | None  # the layer that reduced the map to 1x1, when one of the convolutions before did
    reduced_from: tuple[int, ...]  # the spatial size of the reducer's input (``()`` without a reducer)
    kernel: tuple[int, ...]  # the (dilated) kernel of the first convolution on a 1x1 map
    convolutions: tuple[str, ...]  # the convolutions with a spatial kernel running on 1x1 maps

    def message(self) -> str:
        where = (
            f"'{self.reducer}' reduces the feature map from {size_text(self.reduced_from)} to 1x1"
            if self.reducer is not None
            else "the feature map is 1x1"
        )
        return (
            f"{where}, and {counted(len(self.convolutions), 'convolution')} with a {size_text(self.kernel)} kernel "
            f"(or wider) still run on 1x1 maps after it ({listing(self.convolutions)}): each uses only its centre "
            "tap, and no spatial information is left for them."
        )

    def fix(self) -> str:
        return (
            "Feed the network the input size it was designed for, or remove a stride or a pooling so that the map "
            "reaches 1x1 only at the global pooling before the head."
        )


@register(
    "GA312",
    "spatial-collapsed-before-head",
    severity="warning",
    also=("info",),
    needs=(TracedPass,),
    once="one finding per network: every convolution left with a 1x1 map is listed in it",
    causes=(SpatialCollapsedBeforeHead,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Strides and pools shrink the feature map to 1x1 while several convolutions with 3x3 (or larger) kernels still follow.

    What it does:
        Measures the input of every convolution of the traced pass and counts those with a
        kernel wider than 1 that run on a map of 1 in every spatial dim. It reports once per
        network, at the layer that reduced the map to 1x1 (the first of those convolutions'
        producers): a warning from 3 such convolutions, info for 1 or 2. Convolutions with a
        1x1 kernel on pooled vectors (squeeze-and-excitation) are not counted: that is their
        design.

    Why is this bad:
        On a 1x1 map a kxk convolution only uses its centre tap: the other k²-1 weights of
        every filter multiply padding, the layers are Dense layers that cost k² times more, and
        the network has lost all spatial information several layers before the head. The usual
        cause is an input smaller than the network was designed for (an ImageNet ResNet on
        32x32 CIFAR images) or one stride or pooling too many. Shape and capacity rules of this
        kind are NeuraLint's (TOSEM'21) "structure inefficiency" rules; the threshold (3
        layers) is graphaudit's, so that a last block running at 1x1 is only info.

    Example:
        ```python
        net = mindcv.create_model("resnet18", num_classes=10)     # made for 224x224
        graphaudit.audit(net, optimizer, inputs=(cifar_batch_32x32,), ...)
        ```

    Use instead:
        ```python
        # a network made for the input size (a CIFAR ResNet: 3x3 stem, no max-pool),
        # or inputs resized to the size the network was designed for
        ```
    """
    convs = convolutions(ctx)
    wasted = [c for c in convs if c.on_point and c.spatial_kernel]
    if not wasted:
        return
    first = wasted[0]
    before = convs[: convs.index(first)]
    reducers = [c for c in before if not c.on_point and all(n == 1 for n in c.out)]
    start = reducers[-1] if reducers else None
    severity = "warning" if len(wasted) >= WARN_LAYERS else "info"
    subject = start.layer.path if start is not None else first.layer.path
    cause = SpatialCollapsedBeforeHead(
        start.layer.path if start is not None else None,
        tuple(int(n) for n in start.size) if start is not None else (),
        tuple(int(k) for k in first.kernel),
        tuple(c.layer.path for c in wasted),
    )
    yield ctx.finding(
        severity,
        subject,
        cause,
        [*([start.layer.call] if start is not None else []), *(c.layer.call for c in wasted)],
        subjects=[subject, *(c.layer.path for c in wasted)],
    )

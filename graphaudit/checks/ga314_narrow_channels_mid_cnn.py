"""GA314 narrow-channels-mid-cnn."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.activations import ELEMENTWISE, activation_name
from graphaudit.checks._shared.geometry import convolutions, size_text
from graphaudit.checks._shared.grouping import holder, pattern
from graphaudit.checks._shared.layers import consumers, weight_layers
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing

#: A convolution with at most this many output channels in the middle of a CNN is a bottleneck.
MAX_CHANNELS = 2
_GATES = frozenset({"sigmoid", "hsigmoid", "softmax", "tanh"})


def _feature_path(ctx: AuditContext, node: str) -> bool:
    """Operations a feature map passes on its way to the next layer: norms, activations (not gates), pooling."""
    attrs = ctx.graph.nodes[node]
    name = activation_name(ctx.graph, node)
    if name is not None:
        return name in ELEMENTWISE and name not in _GATES
    if attrs["kind"] == g.CALL and attrs.get("leaf"):
        return "BatchNorm" in attrs["class_name"] or "Pool" in attrs["class_name"]
    return attrs["kind"] == g.OP and ("pool" in attrs["op_type"] or attrs["op_type"] == "batchnorm")


@dataclass(frozen=True)
class NarrowChannelsMidCnn(Cause):
    """Convolutions mid-CNN (the same one of blocks built alike) that narrow the feature map to 1 or 2 channels."""

    names_subjects = True
    convolutions: tuple[str, ...]
    width: int  # their output channels
    positions: tuple[int, ...]  # the first one's output map (spatial dims)
    after: str  # the layer that computes on the first one's output

    def message(self) -> str:
        channels, numbers = counted(self.width, "channel"), counted(self.width, "number")
        if len(self.convolutions) == 1:
            return (
                f"'{self.convolutions[0]}' narrows the feature map to {channels} ({size_text(self.positions)} "
                f"positions) and '{self.after}' computes on it: everything after it sees only {numbers} per position."
            )
        return (
            f"{len(self.convolutions)} convolutions ({listing(self.convolutions)}) narrow the feature map to "
            f"{channels}, and the layer after each computes on it (first '{self.after}'): everything after them "
            f"sees only {numbers} per position."
        )

    def fix(self) -> str:
        shown = f"'{self.convolutions[0]}'" if len(self.convolutions) == 1 else listing(self.convolutions)
        return (
            f"Check the channel count of {shown} (out_channels={self.width}); a bottleneck this narrow is almost "
            "always a typo."
        )


@register(
    "GA314",
    "narrow-channels-mid-cnn",
    severity="warning",
    needs=(TracedPass,),
    causes=(NarrowChannelsMidCnn,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A convolution in the middle of a CNN that narrows the feature map to 1 or 2 channels.

    What it does:
        Reports a warning for the 2-D or 3-D convolutions with 1 or 2 output channels that have another
        convolution before them in the traced pass and whose output reaches a further
        convolution or Dense layer through normalisations, activations, pooling or shape
        operations only. Convolutions that make an attention map (their output goes through a
        sigmoid, softmax or tanh into a product: spatial attention, CBAM), that run on pooled
        1x1 vectors, that are 1-D (a ``Conv1d`` over tokens mixes tokens, not image channels), or
        that make the network's output (a one- or two-class segmentation head), or whose input
        is already that narrow (the narrowing was a channel mean or max before it, as in the
        spatial attention of CBAM and of DBNet++'s adaptive scale fusion, which then refines its
        one-channel map with a 3x3 and a 1x1 convolution) are not reported. The same
        convolution of every block built alike (``blocks.0.conv``, ``blocks.1.conv``...) is one
        finding.

    Why is this bad:
        Everything the later layers know about the image passes through one or two numbers per
        position: the network's capacity collapses to that width, whatever comes after it. It is
        usually a typo (``nn.Conv2d(64, 1, 3)`` for ``nn.Conv2d(64, 128, 3)``) or a channel count
        computed from a wrong variable. A layer much narrower than its neighbours is one of
        NeuraLint's (TOSEM'21) design-inefficiency rules; the width threshold, 2, is graphaudit's:
        a 3-channel map (an RGB-like intermediate in image-to-image networks) is not reported.

    Example:
        ```python
        self.features = nn.SequentialCell([nn.Conv2d(3, 32, 3), nn.ReLU(),
                                           nn.Conv2d(32, 1, 3), nn.ReLU(),      # meant: 64
                                           nn.Conv2d(1, 64, 3), nn.ReLU()])
        ```

    Use instead:
        ```python
        self.features = nn.SequentialCell([nn.Conv2d(3, 32, 3), nn.ReLU(),
                                           nn.Conv2d(32, 64, 3), nn.ReLU(),
                                           nn.Conv2d(64, 64, 3), nn.ReLU()])
        ```
    """
    layers = {layer.call: layer for layer in weight_layers(ctx)}
    seen_conv = False
    found: dict[tuple[str, int], list] = {}
    for conv in convolutions(ctx):
        earlier, seen_conv = seen_conv, True
        width = conv.layer.width
        if not earlier or width is None or width > MAX_CHANNELS or conv.on_point or len(conv.size) < 2:
            continue
        if (conv.layer.in_width or MAX_CHANNELS + 1) <= MAX_CHANNELS:
            continue  # its input is that narrow already (a channel mean: CBAM's, DBNet++'s spatial attention)
        reached = [n for n in consumers(ctx.graph, conv.layer.call, layers, lambda n: _feature_path(ctx, n))]
        following = [layers[n] for n in reached if n in layers and n != conv.layer.call]
        if not following or len(following) != len(reached):
            continue  # a gate, an addition, an output: not a bottleneck of the main path
        found.setdefault((pattern(conv.layer.path), width), []).append((conv, following[0]))
    # One typo in a block's channel count narrows every block built from it: one cause.
    for (_, width), items in found.items():
        paths = [conv.layer.path for conv, _ in items]
        conv, after = items[0]
        cause = NarrowChannelsMidCnn(tuple(paths), int(width), tuple(int(n) for n in conv.out), after.path)
        yield ctx.finding(
            "warning",
            paths[0] if len(items) == 1 else holder(paths),
            cause,
            list(dict.fromkeys(n for c, a in items for n in (c.layer.call, a.call))),
            subjects=paths,
        )

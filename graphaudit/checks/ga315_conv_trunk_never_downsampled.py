"""GA315 conv-trunk-never-downsampled."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.geometry import convolutions, size_text
from graphaudit.checks._shared.layers import weight_layers
from graphaudit.checks._shared.trunk import receptive_fields
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding

#: Spatial convolutions from which a trunk counts as deep.
MIN_CONVS = 3
#: The receptive field, as a fraction of the input's side, below which the head sees local patches only.
FIELD_FRACTION = 4


@dataclass(frozen=True)
class TrunkNeverDownsampled(Cause):
    """A trunk of convolutions that runs at the input's resolution, never strided or pooled, before a Dense head."""

    names_subjects = True
    count: int  # the convolutions with a kernel wider than 1
    first: str  # the first of them
    deepest: str  # the convolution with the largest receptive field
    size: tuple[int, ...]  # the input map of the first convolution (spatial dims)
    field: int  # the deepest convolution's receptive field, in pixels per side
    head: str  # the Dense that reads the trunk's features
    features: int | None  # how many features the head reads (``None``: unknown)

    def message(self) -> str:
        features = "?" if self.features is None else self.features
        return (
            f"{self.count} convolutions, from '{self.first}' to '{self.deepest}', run at the input's resolution "
            f"({size_text(self.size)}) with no stride or pooling: the deepest sees {self.field}x{self.field}-pixel "
            f"patches only, and '{self.head}' reads {features} features."
        )

    def fix(self) -> str:
        return (
            "Downsample between the stages (nn.MaxPool2d(2, 2), or stride=2 in a convolution) so the receptive field "
            "grows with depth and the head reads a small map."
        )


@register(
    "GA315",
    "conv-trunk-never-downsampled",
    severity="warning",
    needs=(TracedPass,),
    once="one finding per network: its convolution trunk and the head after it",
    causes=(TrunkNeverDownsampled,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Three or more convolutions run at the input's full resolution, never strided or pooled, before a Dense head.

    What it does:
        Follows the receptive field and the stride product (the *jump*) of every map of the
        traced pass (``r' = r + (k - 1) * j``, ``j' = j * s``: Araujo et al., Distill 2019).
        It reports a warning when a network of 2-D convolutions, 3 or more of them with a
        kernel wider than 1, never strides or pools (every convolution's output has jump 1)
        and feeds a ``Dense`` on a flattened or pooled vector, while the deepest
        convolution's receptive field is less than a quarter of the input's side. Networks
        that keep the full resolution on purpose (segmentation, denoising, super-resolution)
        end in a convolution, not a ``Dense``, and are not judged.
        A trunk that does shrink the map is judged by GA312 and GA313 (how far).

    Why is this bad:
        A 3x3 convolution widens the receptive field by 2 pixels per layer without a stride:
        six of them see 13x13 patches of a 224x224 image. Every classifier of the ImageNet
        line (LeNet, AlexNet, VGG, ResNet) halves the map between stages so that the last
        features see most of the image and the head stays small; without it the head either
        flattens the whole map into an enormous ``Dense`` (224·224·C inputs) or averages
        purely local features, and the trunk costs the compute of its full-resolution maps.
        Luo et al. (NeurIPS 2016) show the effective receptive field is only a fraction of
        the theoretical one, so a quarter of the input (graphaudit's threshold) is already
        generous. It is a structure-inefficiency rule of NeuraLint (TOSEM'21), and one of the
        structural bugs of Theia's benchmark (arXiv:2412.05775).

    Example:
        ```python
        net = nn.SequentialCell([
            nn.Conv2d(3, 32, 3), nn.ReLU(), nn.Conv2d(32, 32, 3), nn.ReLU(),
            nn.Conv2d(32, 64, 3), nn.ReLU(), nn.Flatten(), nn.Dense(64 * 64 * 64, 10)])   # 64x64 input
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([
            nn.Conv2d(3, 32, 3), nn.ReLU(), nn.MaxPool2d(2, 2), nn.Conv2d(32, 32, 3), nn.ReLU(),
            nn.MaxPool2d(2, 2), nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Flatten(), nn.Dense(64 * 8 * 8, 10)])
        ```
    """
    convs = [c for c in convolutions(ctx) if len(c.size) == 2]
    spatial = [c for c in convs if c.spatial_kernel]
    if len(spatial) < MIN_CONVS:
        return
    fields = receptive_fields(ctx)
    if any(fields.get(c.layer.call, (1, 1))[1] > 1 for c in convs):
        return  # downsampled somewhere: the trunk does shrink the map (how far is another question)
    last = max(convs, key=lambda c: fields.get(c.layer.call, (1, 1))[0])
    order = ctx.graph.nodes[last.layer.call]["order"]
    heads = [
        layer
        for layer in weight_layers(ctx)
        if layer.kind == "dense"
        and layer.in_shape is not None
        and len(layer.in_shape) == 2
        and ctx.graph.nodes[layer.call]["order"] > order
    ]
    if not heads:
        return
    side = min(convs[0].size)
    field = fields[last.layer.call][0]
    if field * FIELD_FRACTION >= side:
        return
    head = heads[0]
    cause = TrunkNeverDownsampled(
        len(spatial),
        spatial[0].layer.path,
        last.layer.path,
        tuple(int(n) for n in convs[0].size),
        int(field),
        head.path,
        int(head.in_shape[1]) if head.in_shape and head.in_shape[1] is not None else None,
    )
    yield ctx.finding(
        "warning",
        last.layer.path,
        cause,
        [c.layer.call for c in spatial] + [head.call],
        subjects=(last.layer.path, head.path),
    )

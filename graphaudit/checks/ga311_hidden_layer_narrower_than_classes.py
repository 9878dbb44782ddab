"""GA311 hidden-layer-narrower-than-classes."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.activations import ELEMENTWISE, activation_name
from graphaudit.checks._shared.layers import Layer, back_from, enclosing_call, weight_layers
from graphaudit.checks._shared.outputs import output_activation
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding

#: A feature vector this many times narrower than the classes is a warning (narrower at all: info).
WARN_FACTOR = 8
_WIDTH_KEEPING = frozenset({"BatchNorm1d", "LayerNorm", "GroupNorm", "Dropout"})


@dataclass(frozen=True)
class HiddenLayerNarrowerThanClasses(Cause):
    """The features entering a layer of a classifier's head are narrower than the classes it predicts."""

    names_subjects = True
    head: str  # the Dense making the output (path)
    classes: int
    layer: str  # the layer of the head the narrowest features enter (path)
    width: int  # how wide those features are

    def message(self) -> str:
        return (
            f"The head '{self.head}' predicts {self.classes} classes, but the features entering '{self.layer}' are "
            f"only {self.width} wide: the {self.classes} logits are affine functions of {self.width} numbers, so "
            "they cannot vary freely."
        )

    def fix(self) -> str:
        return (
            f"Widen the layer feeding '{self.layer}' to at least the number of classes ({self.classes}), or drop "
            "the bottleneck."
        )


def _keeps_width(ctx: AuditContext, node: str) -> bool:
    attrs = ctx.graph.nodes[node]
    if activation_name(ctx.graph, node) in ELEMENTWISE:
        return True
    return attrs["kind"] == g.CALL and bool(attrs.get("leaf")) and attrs["class_name"] in _WIDTH_KEEPING


def _head(ctx: AuditContext, layers: dict[str, Layer]) -> Layer | None:
    _, node = output_activation(ctx.graph)
    if node is None:
        return None
    if node in layers:
        return layers[node]
    around = enclosing_call(ctx.graph, node)  # the activation of a Dense(activation=...)
    if around in layers:
        return layers[around]
    before = back_from(ctx.graph, node, lambda n: n == node)
    return layers.get(before or "")


@register(
    "GA311",
    "hidden-layer-narrower-than-classes",
    severity="warning",
    also=("info",),
    needs=(TracedPass,),
    causes=(HiddenLayerNarrowerThanClasses,),
    once="one finding per network: its classifier head and the narrowest hidden layer before it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A hidden layer of the classifier's head narrower than the number of classes it predicts.

    What it does:
        Starts at the ``Dense`` that makes the network's output (``C`` classes, at least 3) and
        walks back through the ``Dense`` layers of its head — joined by element-wise
        activations, ``Dropout``, ``BatchNorm1d`` / ``LayerNorm`` — to the feature vector that
        enters the head. When the narrowest width on that path (the feature vector's, or a
        hidden layer's) is below ``C``, it reports: a warning when it is 8 times narrower than
        ``C`` or more, info otherwise. The network's own input is not a hidden layer and is not
        counted.

    Why is this bad:
        Every class score is an affine function of the narrowest layer: with a width ``w < C``
        the ``C`` logits live in a ``w``-dimensional subspace, so at most ``w + 1`` classes can
        be told apart freely and the others are forced into fixed relations (the "softmax
        bottleneck"). A 2-unit layer before a 10-class output is almost always a typo. A
        bottleneck narrower than the output is a design inefficiency of the kind NeuraLint
        (TOSEM'21) reports. The thresholds are graphaudit's, chosen to stay silent on correct
        networks: 1000-class ImageNet heads fed by 512 (ResNet-18) or 192 (ViT-Tiny) features
        are info (narrower, but well within what trains), a 4-feature layer before 100 classes
        is a warning.

    Example:
        ```python
        net = nn.SequentialCell([nn.Dense(784, 128), nn.ReLU(), nn.Dense(128, 2), nn.ReLU(), nn.Dense(2, 100)])
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Dense(784, 256), nn.ReLU(), nn.Dense(256, 128), nn.ReLU(), nn.Dense(128, 100)])
        ```
    """
    layers = {layer.call: layer for layer in weight_layers(ctx)}
    head = _head(ctx, layers)
    if head is None or head.kind != "dense" or head.width is None or head.width < 3:
        return
    classes = head.width
    chain, current = [head], head
    while True:
        before = back_from(ctx.graph, current.source, lambda n: _keeps_width(ctx, n))
        previous = layers.get(before or "")
        if previous is None or previous.kind != "dense" or previous.call in {c.call for c in chain}:
            break
        chain.append(previous)
        current = previous
    widths = [(layer.in_width, layer) for layer in chain if layer.in_width]
    origin = back_from(ctx.graph, chain[-1].source, lambda n: _keeps_width(ctx, n))
    if origin is not None and ctx.graph.nodes[origin]["kind"] == g.INPUT:
        widths = widths[:-1]  # the first layer reads the network's input: no hidden layer
    if not widths:
        return
    width, layer = min(widths, key=lambda item: item[0] or 0)
    assert width is not None
    if width >= classes:
        return
    severity = "warning" if width * WARN_FACTOR <= classes else "info"
    cause = HiddenLayerNarrowerThanClasses(head.path, int(classes), layer.path, int(width))
    yield ctx.finding(severity, layer.path, cause, [layer.call, head.call])

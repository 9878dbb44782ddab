"""GA320 capacity-below-task."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.layers import Layer, back_from, enclosing_call, weight_layers
from graphaudit.checks._shared.outputs import output_activation
from graphaudit.checks._shared.trunk import spatial_of
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted

#: Classes from which a classifier of images is judged (MNIST, CIFAR-10 and up).
MIN_CLASSES = 10
#: The smallest image side judged (MNIST's 28x28; keyword-spotting spectrograms are narrower).
MIN_SIDE = 28
#: A "handful" of filters: below the 32 of the first convolution of the Keras CIFAR-10 example. An
#: ImageNet network's 512 features before 1000 classes are narrower than the classes, not a handful.
HANDFUL = 32
#: Hidden layers up to which the network is shallow (LeNet-1 has 2): deeper stacks of narrow layers
#: compose their features, and are not judged.
MAX_HIDDEN = 2


@dataclass(frozen=True)
class CapacityBelowTask(Cause):
    """An image classifier whose one or two hidden layers are all narrower than its classes."""

    size: tuple[int, ...]  # the input image's spatial size
    classes: int  # the head's units
    hidden: tuple[str, ...]  # the kind of each hidden layer ("conv" or "dense")
    width: int  # the widest hidden layer's filters or units
    widest: str  # that layer
    head: str  # the Dense that makes the output

    def message(self) -> str:
        kinds = (
            "filters or units"
            if set(self.hidden) == {"conv", "dense"}
            else ("filters" if self.hidden[0] == "conv" else "units")
        )
        return (
            f"The network classifies {'x'.join(map(str, self.size))} images into {self.classes} classes with "
            f"{counted(len(self.hidden), 'hidden layer')} of at most {self.width} {kinds} (the widest, "
            f"'{self.widest}'): fewer features anywhere than the classes it must tell apart."
        )

    def fix(self) -> str:
        return (
            f"Widen the hidden layers beyond the {self.classes} classes (32 to 64 filters in the first convolution, "
            "doubling after each pooling, as LeNet-5 and the Keras CIFAR-10 example do), or add layers."
        )


def _head(ctx: AuditContext, layers: dict[str, Layer]) -> Layer | None:
    """The ``Dense`` that makes the network's output (through its activation, if any)."""
    _, node = output_activation(ctx.graph)
    if node is None:
        return None
    if node in layers:
        return layers[node]
    around = enclosing_call(ctx.graph, node)  # the activation of a Dense(activation=...)
    if around in layers:
        return layers[around]
    return layers.get(back_from(ctx.graph, node, lambda n: n == node) or "")


def _image(ctx: AuditContext) -> tuple[int, ...]:
    """The spatial size of the network's first 4-D ``(N, C, H, W)`` input (``()`` when it has none)."""
    for node, _ in sorted(g.nodes_of_kind(ctx.graph, g.INPUT), key=lambda item: str(item[0])):
        for _, _, data in ctx.graph.out_edges(node, data=True):
            if data["kind"] == g.FLOWS:
                size = spatial_of(data)
                if len(size) == 2:
                    return size
    return ()


@register(
    "GA320",
    "capacity-below-task",
    severity="warning",
    needs=(TracedPass,),
    once="one finding per network: its widest hidden layer against its classes",
    causes=(CapacityBelowTask,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An image classifier of 10 classes or more with one or two hidden layers, each with fewer filters or units than its classes.

    What it does:
        For a network whose input is an image of at least 28x28 pixels (a 4-D ``(N, C, H,
        W)`` tensor) and whose output is a ``Dense`` of 10 classes or more, with one or two
        hidden weight layers, takes the widest of them (the output channels of every convolution, the units of
        every ``Dense`` but the head) and reports a warning when even that is narrower than
        the number of classes and than 32 (the first convolution of the Keras CIFAR-10
        example; ResNet's 512 features before ImageNet's 1000 classes are not a handful):
        a network of a handful of filters or units (``Conv2d(3, 4, 3)``
        then the head, ``Dense(3072, 8)`` then the head) for CIFAR-10's 10 classes. A network
        with no hidden layer (logistic regression, a linear probe) is a design choice and is
        not judged, nor are deeper networks (three narrow layers or more compose their
        features: depth makes up for width), nor inputs that are not images (tabular rows, token ids, spectrograms
        narrower than 28).

    Why is this bad:
        Theia (arXiv:2412.05775) judges a network's capacity against its data — the input's
        shape and the number of classes — and reports one too small as a structural bug: the
        loss plateaus high and no learning rate helps. The threshold is graphaudit's, set on
        the smallest classic designs: LeNet-1 (LeCun et al., 1989; 4 and 12 feature maps for
        10 digits of 28x28) and LeNet-5 (6 and 16 maps, 120 and 84 units) both have a layer
        wider than their 10 classes; a network none of whose layers is as wide as its output
        has fewer features anywhere than the classes it must tell apart. A narrow layer in an
        otherwise wide head is GA311's.

    Example:
        ```python
        net = nn.SequentialCell([nn.Conv2d(3, 4, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
                                 nn.Flatten(), nn.Dense(4 * 16 * 16, 10)])     # CIFAR-10
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([nn.Conv2d(3, 32, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
                                 nn.Conv2d(32, 64, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
                                 nn.Flatten(), nn.Dense(64 * 8 * 8, 10)])
        ```
    """
    size = _image(ctx)
    if not size or min(size) < MIN_SIDE:
        return
    ordered = weight_layers(ctx)
    layers = {layer.call: layer for layer in ordered}
    head = _head(ctx, layers)
    if head is None or head.kind != "dense" or head.width is None or head.width < MIN_CLASSES:
        return
    hidden = [layer for layer in ordered if layer.call != head.call and layer.cell_node != head.cell_node]
    widths = [(layer.width, layer) for layer in hidden if layer.width]
    if not hidden or len(hidden) > MAX_HIDDEN or len(widths) != len(hidden):
        return  # a linear model, a deeper network, or a layer whose width is unknown
    width, widest = max(widths, key=lambda item: item[0] or 0)
    assert width is not None
    if width >= min(head.width, HANDFUL):
        return
    cause = CapacityBelowTask(
        tuple(int(n) for n in size),
        int(head.width),
        tuple(layer.kind for layer in hidden),
        int(width),
        widest.path,
        head.path,
    )
    yield ctx.finding(
        "warning",
        widest.path,
        cause,
        [layer.call for layer in hidden] + [head.call],
        subjects=(widest.path, head.path),
    )

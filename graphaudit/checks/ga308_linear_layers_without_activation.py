"""GA308 linear-layers-without-activation."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.activations import ELEMENTWISE, activation_name
from graphaudit.checks._shared.grouping import holder, pattern
from graphaudit.checks._shared.layers import Layer, entered_layer, is_glue, weight_layers
from graphaudit.checks._shared.trunk import affine_kind, is_pooling
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

if TYPE_CHECKING:
    import networkx as nx

#: Operations that move axes: after one, the second layer mixes another axis than the first's outputs.
_PERMUTING = frozenset({"transpose", "permute", "swapaxes", "swapdims", "movedim"})


def _max_pooling(graph: nx.MultiDiGraph, node: str) -> str | None:
    """The name of a max pooling (cell or operation): non-linear, but no activation (``None`` otherwise)."""
    if not is_pooling(graph, node) or affine_kind(graph, node) is not None:
        return None
    attrs = graph.nodes[node]
    name = attrs["class_name"] if attrs["kind"] == g.CALL else str(attrs.get("op_type", ""))
    return name if "max" in name.lower() else None


def _linear_successors(
    ctx: AuditContext, start: str, layers: dict[str, Layer]
) -> tuple[list[tuple[str, bool, tuple[str, ...]]], int]:
    """The weight layers *start*'s output reaches through shape glue and affine maps only, and how many readers it has.

    Each is ``(layer call, axes moved, affine maps between)``; the count is of what reads
    *start*'s output, past shape glue and affine maps (a weight layer, an addition, the output...).
    """
    graph = ctx.graph
    found: list[tuple[str, bool, tuple[str, ...]]] = []
    seen = {start}
    frontier: list[tuple[str, bool, tuple[str, ...]]] = [(start, False, ())]
    readers: set[str] = set()
    while frontier:
        current, moved, between = frontier.pop(0)
        for target, _ in g.edges_out(graph, current, g.FLOWS):
            if target in seen:
                continue
            seen.add(target)
            if graph.nodes[target]["kind"] not in (g.CALL, g.OP):
                readers.add(target)
                continue
            entered = entered_layer(graph, target, current, layers)
            if entered is not None:
                readers.add(entered)
                found.append((entered, moved, between))
            elif is_glue(graph, target):
                permutes = graph.nodes[target].get("op_type") in _PERMUTING
                frontier.append((target, moved or permutes, between))
            else:
                # A max pooling is followed too: a conv trunk whose only non-linearity is the pooling
                # (Keras's Conv2D without activation="relu" before MaxPooling2D) is a missing activation.
                affine = affine_kind(graph, target) or _max_pooling(graph, target)
                if affine is None:
                    readers.add(target)
                else:
                    frontier.append((target, moved, (*between, affine)))
    return found, len(readers)


def _non_linear(ctx: AuditContext) -> bool:
    """Whether the traced pass applies an element-wise activation anywhere (a non-linear network)."""
    graph = ctx.graph
    return any(
        activation_name(graph, node) in ELEMENTWISE
        for node, attrs in graph.nodes(data=True)
        if attrs["kind"] in (g.CALL, g.OP)
    )


def _pooled(between: tuple[str, ...]) -> bool:
    """A max pooling is among the maps between the two layers."""
    return any("max" in name.lower() for name in between)


def _spatial(layer: Layer) -> bool:
    """A convolution whose kernel spans more than one position (not a 1x1 projection, not a Dense)."""
    return layer.kind == "conv" and any(k > 1 for k in layer.kernel)


@dataclass(frozen=True)
class LinearLayersWithoutActivation(Cause):
    """Weight layers feeding the next ones through shape operations (or affine maps) only: one linear map in two."""

    names_subjects = True
    pairs: tuple[
        tuple[str, str], ...
    ]  # (first layer, second layer) paths, the same pair of blocks built alike
    first_class: str  # the first layer's class ("Dense", "Conv2d")
    second_class: str
    between: tuple[
        str, ...
    ]  # the affine maps (or max pooling) between them, each once; () for shape operations only
    pooled: bool  # a max pooling is among them: the only non-linearity between the two layers

    def _how(self) -> str:
        if not self.between:
            return "shape operations only"
        maps = listing(self.between, None)
        return f"{maps} and shape operations only ({'no activation' if self.pooled else 'affine maps'})"

    def message(self) -> str:
        (first, second), one, two = self.pairs[0], self.first_class, self.second_class
        if len(self.pairs) == 1:
            text = f"'{first}' ({one}) feeds '{second}' ({two}) through {self._how()}"
        else:
            shown = listing([f"'{a}' -> '{b}'" for a, b in self.pairs])
            text = (
                f"in {len(self.pairs)} pairs of layers ({shown}) the first ({one}) feeds the second ({two}) "
                f"through {self._how()}"
            )
        if not self.pooled:
            return f"{text}: with no activation between them the two layers compute one linear map."
        return (
            f"{text}: {repr(first) if len(self.pairs) == 1 else 'the first'} has no activation, so the max "
            "pooling is the only non-linearity between the two layers (a convolution trunk built without its ReLUs)."
        )

    def fix(self) -> str:
        first, second = self.pairs[0]
        if len(self.pairs) == 1:
            where, declared = f"'{first}' and '{second}'", (first, second)
        else:
            where, declared = "the two layers of each pair", (pattern(first), pattern(second))
        return (
            f"Put the activation between {where} (construct() may define it and never call it); if the "
            f"factorisation is meant, declare it: Spec(linear_connections=[({declared[0]!r}, {declared[1]!r})])."
        )


@register(
    "GA308",
    "linear-layers-without-activation",
    severity="warning",
    also=("info",),
    needs=(TracedPass,),
    uses=(DeclaredDesign,),
    causes=(LinearLayersWithoutActivation,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Two Dense or convolution layers joined only by reshapes, flattens or transposes: one linear map in two.

    What it does:
        Follows the output of every ``Dense`` / ``mint.nn.Linear`` / convolution without an
        activation of its own through the traced pass and reports a warning when it reaches
        another such layer through shape operations only: ``reshape``, ``view``, ``flatten``,
        transposes and permutes, ``squeeze``, ``cast``, ``x[...]``, and the cells ``nn.Flatten``,
        ``nn.Identity`` and ``nn.Dropout``. Two convolutions with kernels wider than 1 are also
        followed through *affine* maps — a BatchNorm, an average pooling, a nearest or bilinear
        resize, a padding — since they still compose into one (larger) convolution: a conv
        trunk without activations (a Keras ``Conv2D`` ported without ``activation="relu"``).
        A convolution with a kernel wider than 1 is also followed through a max pooling into the
        next convolution or ``Dense`` (``conv → max pool → conv``, ``conv → max pool → flatten →
        Dense``): the pooling is non-linear, but no design leaves it as the only non-linearity
        after a convolution — the ReLU was forgotten — so this is a warning even in a network
        with no activation at all.
        Anything else that computes — an activation, a LayerNorm, an addition, a product —
        ends the search. A first layer whose output is read by anything besides
        the second one is not reported: its output is a shared feature, not half of a stack
        (an FPN's lateral 1x1 projection feeds both its 3x3 smoothing convolution and the
        top-down sum: mindocr's DBNet), and neither is a 1x1 projection that reaches another
        layer through a BatchNorm (MobileNetV2's linear bottleneck, linear by design). Other
        pairs not reported: a grouped or depthwise convolution next to another convolution or a ``Dense``
        (a separable convolution, PVTv2's ``fc1 → depthwise conv`` feed-forward, is a
        factorisation by design); pairs in which the second layer mixes another axis than the
        first — a transpose between them (MLP-Mixer's token and channel mixing), or a first layer
        that projects to one channel (CoaT's ``aggregate`` of its class tokens) — which compose
        into a structured map no single layer of either kind computes; and the pairs a design declares
        (``Spec(linear_connections=[("down", "up")])``, ``[connections] linear`` in TOML). The
        finding is a warning in a network that applies activations elsewhere (the missing one is
        the odd one out), info in a network with no element-wise activation at all: a linear
        model written as two layers, as toy and test networks are, is a design choice. The
        same pair in every block built alike (``blocks.0.fc1 -> blocks.0.fc2``,
        ``blocks.1.fc1 -> blocks.1.fc2``...) is one finding.

    Why is this bad:
        ``W2 (W1 x + b1) + b2`` is ``(W2 W1) x + c``: the second layer adds parameters and
        compute but no capacity, and the network is less deep than it looks — the missing
        activation between them is the bug. It is one of the structural rules of NeuraLint
        (TOSEM'21, its activation-function rules) and of Theia (arXiv:2412.05775); graphaudit
        checks it on the traced data flow, where a ``construct`` that forgets to call
        ``self.relu`` shows as plainly as a missing ``nn.ReLU()`` in a ``SequentialCell``.

    Example:
        ```python
        def construct(self, x):
            x = self.fc1(x)          # self.relu defined in __init__, never called
            return self.fc2(x)
        ```

    Use instead:
        ```python
        def construct(self, x):
            return self.fc2(self.relu(self.fc1(x)))
        ```

        A factorisation meant to be linear (a low-rank ``Dense(512, 32)`` then ``Dense(32,
        512)``) is declared: ``Spec(linear_connections=[("proj.down", "proj.up")])``.
    """
    layers = {layer.call: layer for layer in weight_layers(ctx)}
    severity = "warning" if _non_linear(ctx) else "info"
    reported: set[tuple[str, str]] = set()
    causes: dict[tuple[str, str, str], list] = {}
    for call, first in layers.items():
        if not first.leaf:
            continue  # a Dense(activation=...) ends in its activation
        successors, readers = _linear_successors(ctx, call, layers)
        if readers > 1:
            continue  # its output is read elsewhere too (an FPN's lateral projection): a shared feature, not a stack
        for found, moved, between in successors:
            second = layers[found]
            if second.cell_node == first.cell_node or moved or first.width == 1:
                continue  # the second layer mixes another axis: a structured (Kronecker) factorisation
            if first.groups > 1 or second.groups > 1:
                continue  # a depthwise-separable (or grouped) factorisation: Dense/1x1 with a depthwise conv
            pooled = _pooled(between)
            if pooled and not _spatial(first):
                continue  # a 1x1 projection then a pooling: judged as the affine maps are (below), not here
            if between and not pooled and not (_spatial(first) and _spatial(second)):
                continue  # a 1x1 projection then a BatchNorm: a linear bottleneck by design (MobileNetV2)
            pair = (first.path, second.path)
            if pair in reported or ctx.spec.declares_linear(*pair):
                continue
            reported.add(pair)
            # The activation forgotten in one block's construct is forgotten in every block: one cause.
            causes.setdefault(
                (pattern(first.path), pattern(second.path), tuple(dict.fromkeys(between))), []
            ).append((first, second, call, found))
    for (_, _, between), pairs in causes.items():
        first, second, _, _ = pairs[0]
        one, two = (ctx.graph.nodes[layer.call]["class_name"] for layer in (first, second))
        pooled = _pooled(between)
        cause = LinearLayersWithoutActivation(
            tuple((a.path, b.path) for a, b, _, _ in pairs), one, two, between, pooled
        )
        # A max pooling is a non-linearity no design relies on alone: a conv trunk without any
        # activation but with poolings is a port that lost them, not a linear model.
        yield ctx.finding(
            "warning" if pooled else severity,
            second.path if len(pairs) == 1 else holder([b.path for _, b, _, _ in pairs]),
            cause,
            [n for _, _, c, f in pairs for n in (c, f)],
            subjects=[p for a, b, _, _ in pairs for p in (a.path, b.path)],
        )

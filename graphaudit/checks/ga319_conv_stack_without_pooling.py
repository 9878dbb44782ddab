"""GA319 conv-stack-without-pooling."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.activations import ELEMENTWISE, activation_name
from graphaudit.checks._shared.geometry import ConvMap, convolutions, size_text
from graphaudit.checks._shared.layers import _pair, consumers, enclosing_call, weight_layers
from graphaudit.checks._shared.trunk import affine_kind, receptive_fields
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

#: The most stride-1 3x3 convolutions VGG runs at one resolution (VGG-19, configuration E)...
MOST = 4
#: ...and in its first two stages (at the input's resolution and at half of it) VGG runs 2: one more
#: is allowed there (CIFAR CNNs built of three-convolution blocks).
MOST_EARLY = 3
#: The stride product (jump) up to which a stage is one of the first two.
EARLY_JUMP = 2
#: Cells that keep a map's positions and channels between two convolutions of one stack.
_PASSING = ("BatchNorm", "GroupNorm", "LayerNorm", "InstanceNorm", "Dropout")
#: Cells that only group layers: a convolution inside one is not in a block of its own.
_CONTAINERS = frozenset({"SequentialCell", "CellList", "CellDict"})


def _passes(ctx: AuditContext, node: str) -> bool:
    """An activation, a normalisation, a dropout or a padding: what sits between two convolutions of a plain stack."""
    attrs = ctx.graph.nodes[node]
    if activation_name(ctx.graph, node) in ELEMENTWISE:
        return True
    if attrs["kind"] == g.CALL and attrs.get("leaf") and attrs["class_name"].startswith(_PASSING):
        return True
    kind = affine_kind(ctx.graph, node)
    return kind is not None and "pad" in kind.lower()


def _plain(conv: ConvMap) -> bool:
    """A dense (not grouped) 2-D convolution with a spatial kernel and stride 1: one more layer at the same scale."""
    stride = _pair(getattr(conv.layer.cell, "stride", 1), len(conv.size))
    return (
        len(conv.size) == 2 and conv.spatial_kernel and conv.layer.groups == 1 and all(s == 1 for s in stride)
    )


def _stacks(ctx: AuditContext) -> list[list[ConvMap]]:
    """The runs of plain convolutions each of which feeds the next, and nothing else, through activations and norms."""
    plain = {c.layer.call: c for c in convolutions(ctx) if _plain(c)}
    layers = {layer.call: layer for layer in weight_layers(ctx)}
    following: dict[str, str] = {}
    for call in plain:
        readers = consumers(ctx.graph, call, layers, through=lambda n: _passes(ctx, n))
        # One reader only: an output also read by a shortcut or a concatenation is a residual or
        # dense block (ResNet, DenseNet, Inception), whose depth is not a plain stack's.
        if len(readers) == 1 and readers[0] in plain and readers[0] != call:
            following[call] = readers[0]
    heads = set(plain) - set(following.values())
    stacks = []
    for call in sorted(heads, key=lambda c: ctx.graph.nodes[c]["order"]):
        run, current = [plain[call]], call
        while current in following and following[current] not in {c.layer.call for c in run}:
            current = following[current]
            run.append(plain[current])
        stacks.append(run)
    return stacks


def _in_own_blocks(ctx: AuditContext, run: list[ConvMap]) -> bool:
    """Each convolution is the only weight layer of its own instance of one block class (a re-parameterised RepVGG)."""
    parents = [enclosing_call(ctx.graph, c.layer.call) for c in run]
    if any(p is None for p in parents) or len(set(parents)) != len(parents):
        return False
    names = {ctx.graph.nodes[p]["class_name"] for p in parents if p is not None}
    if len(names) != 1 or names & _CONTAINERS:
        return False
    per_block: dict[str, int] = {}
    for layer in weight_layers(ctx):
        parent = enclosing_call(ctx.graph, layer.call)
        if parent in parents:
            per_block[parent] = per_block.get(parent, 0) + 1
    return all(count == 1 for count in per_block.values())


@dataclass(frozen=True)
class ConvStackWithoutPooling(Cause):
    """Stacks of plain convolutions at one resolution longer than any VGG stage, in a network that downsamples."""

    names_subjects = True
    stacks: tuple[tuple[str, ...], ...]  # each stack's convolutions, in order
    early: bool  # the first stack is in the network's first two stages
    size: tuple[int, ...]  # the first stack's map (spatial dims)

    def message(self) -> str:
        run = self.stacks[0]
        stage = "in the network's first two stages " if self.early else ""
        others = [f"'{other[0]}' to '{other[-1]}' ({len(other)})" for other in self.stacks[1:]]
        more = (
            f" So {'does 1 more stack' if len(others) == 1 else f'do {len(others)} more stacks'}: {listing(others)}."
            if others
            else ""
        )
        shown = listing(f"'{path}'" for path in run)
        return (
            f"{len(run)} convolutions in a row ({shown}) run {stage}at one resolution "
            f"({size_text(self.size)}) with no pooling or stride between them, while the network downsamples "
            f"elsewhere: VGG runs {'2 there' if self.early else 'at most 4 (VGG-19)'} before a pooling.{more}"
        )

    def fix(self) -> str:
        run = self.stacks[0]
        where = f"the stack from '{run[0]}' to '{run[-1]}'" + (
            " and each other stack" if len(self.stacks) > 1 else ""
        )
        return (
            f"Put a pooling (nn.MaxPool2d(2, 2)) or a strided convolution within {where}, as a VGG block ends "
            "in one, or make it a residual stage."
        )


@register(
    "GA319",
    "conv-stack-without-pooling",
    severity="warning",
    needs=(TracedPass,),
    causes=(ConvStackWithoutPooling,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """More 3x3 convolutions in a row at one resolution than any VGG stage, in a network that pools elsewhere.

    What it does:
        Follows, in the traced pass, chains of plain convolutions — 2-D, not grouped, a kernel
        wider than 1, stride 1 — in which each one's output goes to the next and nowhere else,
        through activations, normalisations, dropout and padding only. A pooling, a strided
        convolution, a 1x1 convolution, an addition or a concatenation ends a chain. It
        reports a warning for a chain of more than 4 convolutions, or of more than 3 in the
        network's first two stages (before the second downsampling), when the network
        downsamples somewhere (a pooling or a strided convolution): the VGG block whose
        ``MaxPool2d`` was forgotten. Residual, dense and Inception blocks are not chains (their
        outputs are read twice), and neither are blocks that hold one convolution each, all of
        one class (a re-parameterised RepVGG, deployed as a plain stack on purpose). A network
        that never downsamples is GA315's.

    Why is this bad:
        VGG (Simonyan & Zisserman, ICLR 2015, Table 1) fixed the recipe every tutorial CNN
        follows: a stage of 3x3 convolutions, then a 2x2 max pooling that halves the map and
        doubles the channels. Its deepest configuration, VGG-19, runs at most 4 convolutions
        at one resolution, and 2 in its first two stages, where the maps are largest (graphaudit
        allows 3 there: CIFAR networks built of three-convolution blocks). A longer
        plain stack at one scale grows the receptive field by only 2 pixels per layer, costs
        the compute of the full-size maps, and without normalisation or shortcuts is the
        plain deep stack that trains worse as it deepens (He et al., CVPR 2016, Fig. 1). Theia
        (arXiv:2412.05775) reports it, judged against the input's size, as a structural bug.

    Example:
        ```python
        layers = [nn.Conv2d(3, 64, 3), nn.ReLU()]
        for _ in range(5):
            layers += [nn.Conv2d(64, 64, 3), nn.ReLU()]       # the block's MaxPool2d forgotten
        net = nn.SequentialCell([*layers, nn.MaxPool2d(2, 2), nn.Flatten(), nn.Dense(64 * 16 * 16, 10)])
        ```

    Use instead:
        ```python
        net = nn.SequentialCell([
            nn.Conv2d(3, 64, 3), nn.ReLU(), nn.Conv2d(64, 64, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Conv2d(64, 128, 3), nn.ReLU(), nn.Conv2d(128, 128, 3), nn.ReLU(), nn.MaxPool2d(2, 2),
            nn.Flatten(), nn.Dense(128 * 8 * 8, 10)])
        ```
    """
    fields = receptive_fields(ctx)
    if not any(jump > 1 for _, jump in fields.values()):
        return  # never downsampled: a full-resolution network, whose stacks are its design
    flagged = []
    for run in _stacks(ctx):
        jump = fields.get(run[0].layer.call, (1, 1))[1]
        most = MOST_EARLY if jump <= EARLY_JUMP else MOST
        if len(run) > most and not _in_own_blocks(ctx, run):
            flagged.append((run, jump <= EARLY_JUMP))
    if not flagged:
        return
    # One mistake repeated (every stage built by the same loop) is one finding listing each stack.
    run, early = flagged[0]
    cause = ConvStackWithoutPooling(
        tuple(tuple(c.layer.path for c in r) for r, _ in flagged), early, tuple(int(n) for n in run[0].size)
    )
    every = [c for r, _ in flagged for c in r]
    yield ctx.finding(
        "warning",
        run[0].layer.path,
        cause,
        [c.layer.call for c in every],
        subjects=tuple(c.layer.path for c in every),
    )

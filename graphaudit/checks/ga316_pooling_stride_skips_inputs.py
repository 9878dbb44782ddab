"""GA316 pooling-stride-skips-inputs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.geometry import convolutions, size_text
from graphaudit.checks._shared.grouping import holder, pattern
from graphaudit.checks._shared.trunk import poolings
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing, pronouns

#: A pooling that divides the map by this much per side in one step, with convolutions after it, is info.
FAST = 4


@dataclass(frozen=True)
class PoolingStrideSkipsInputs(Cause):
    """Poolings (the same one of blocks built alike) whose stride is larger than their window: inputs never read."""

    names_subjects = True
    poolings: tuple[str, ...]
    class_name: str  # the pooling's class (MaxPool2d)
    window: tuple[int, ...]
    stride: tuple[int, ...]

    def message(self) -> str:
        they = pronouns(len(self.poolings))
        named = (
            f"'{self.poolings[0]}' ({self.class_name}) has"
            if len(self.poolings) == 1
            else f"{listing(self.poolings)} ({self.class_name}) have"
        )
        return (
            f"{named} a {size_text(self.window)} window and a stride of {size_text(self.stride)}: the positions "
            f"between {they.possessive} windows are never read, and what the layers before {they.object} compute "
            "there reaches nothing."
        )

    def fix(self) -> str:
        stride, window = max(self.stride), max(self.window)
        return (
            f"Make the stride at most the window (kernel_size={stride}, stride={stride}, or kernel_size={window}, "
            f"stride={window}); check that kernel_size and stride were not swapped."
        )


@dataclass(frozen=True)
class PoolingShrinksMapAtOnce(Cause):
    """Poolings (the same one of blocks built alike) that shrink the map 4x or more at once, convolutions after them."""

    names_subjects = True
    poolings: tuple[str, ...]
    class_name: str  # the pooling's class (MaxPool2d)
    size: tuple[int, ...]  # the first pooling's input map (spatial dims)
    out: tuple[int, ...]  # and its output map
    following: int  # the convolutions with a spatial kernel after the first pooling
    first_following: str  # the first of them

    def message(self) -> str:
        size, out = size_text(self.size), size_text(self.out)
        if len(self.poolings) == 1:
            text = f"'{self.poolings[0]}' ({self.class_name}) shrinks the map from {size} to {out} in one step, and"
        else:
            text = (
                f"{listing(self.poolings)} ({self.class_name}) each shrink the map 4x or more in one step (the first "
                f"from {size} to {out}), and"
            )
        return (
            f"{text} {counted(self.following, 'convolution')} with spatial kernels {'follows' if self.following == 1 else 'follow'} "
            f"{'it' if len(self.poolings) == 1 else 'the first'} (first '{self.first_following}')."
        )

    def fix(self) -> str:
        return (
            "Downsample in steps of 2 (a stride-2 pooling or convolution per stage) so the following convolutions "
            "see the detail they are meant to combine."
        )


@register(
    "GA316",
    "pooling-stride-skips-inputs",
    severity="warning",
    also=("info",),
    needs=(TracedPass,),
    causes=(PoolingStrideSkipsInputs, PoolingShrinksMapAtOnce),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A pooling whose stride is larger than its window (inputs never read), or one that shrinks the map 4x or more at once.

    What it does:
        Reads the window and the stride of every pooling cell of the traced pass
        (``nn.MaxPool2d``, ``nn.AvgPool2d``, 1-D and 3-D too). A stride larger than the window
        in some dimension is a warning: the rows and columns between two windows are never
        read (a 1x1 window, a deliberate subsampling, excepted). A pooling (not global) that
        divides the map by 4 or more per side in one step, while convolutions with a kernel
        wider than 1 still follow it, is info. The same pooling of every block built alike
        (``blocks.0.pool``, ``blocks.1.pool``..., with one window and stride) is one finding.

    Why is this bad:
        ``MaxPool2d(kernel_size=2, stride=4)`` discards three quarters of its input: the
        features of the skipped positions reach nothing, whatever the layers before them
        learn. Pooling windows equal to or overlapping their stride is the design of every
        CNN since AlexNet (3x3 windows with stride 2: Krizhevsky et al. 2012); the two
        arguments swapped (``MaxPool2d(2, 4)`` for ``(4, 2)``) or a Keras ``pool_size`` ported
        as ``stride`` give the skipping case. A single pooling that shrinks the map by 4 or
        more per side (16x fewer positions) throws away resolution that the following
        convolutions cannot recover; it is info because some designs do it on purpose.
        Structure inefficiency is among NeuraLint's rule families (TOSEM'21).

    Example:
        ```python
        nn.MaxPool2d(kernel_size=2, stride=4)
        ```

    Use instead:
        ```python
        nn.MaxPool2d(kernel_size=2, stride=2)           # or kernel_size=3, stride=2 (overlapping)
        ```
    """
    pools = poolings(ctx)
    convs = [c for c in convolutions(ctx) if c.spatial_kernel]
    graph = ctx.graph
    skipping: dict[tuple, list] = {}
    fast: dict[tuple, list] = {}
    for pool in pools:
        if pool.global_pool:
            continue
        decimates = all(
            w == 1 for w in pool.window
        )  # a 1x1 window: subsampling on purpose (ResNet's 1x1 shortcut)
        skipped = [] if decimates else [d for d, (w, s) in enumerate(zip(pool.window, pool.stride)) if s > w]
        order = graph.nodes[pool.node]["order"]
        later = [c for c in convs if graph.nodes[c.layer.call]["order"] > order]
        # One pooling written wrong in a block (or copied down a stack) is one cause, however many.
        key = (pattern(pool.path), pool.name, tuple(pool.window), tuple(pool.stride))
        if skipped:
            skipping.setdefault(key, []).append(pool)
        elif later and min(s // max(o, 1) for s, o in zip(pool.size, pool.out)) >= FAST:
            fast.setdefault(key, []).append((pool, later))
    for group in skipping.values():
        pool = group[0]
        paths = [p.path for p in group]
        cause = PoolingStrideSkipsInputs(
            tuple(paths), pool.name, tuple(int(w) for w in pool.window), tuple(int(s) for s in pool.stride)
        )
        yield ctx.finding(
            "warning",
            paths[0] if len(group) == 1 else holder(paths),
            cause,
            [p.node for p in group],
            subjects=paths,
        )
    for group in fast.values():
        (pool, later), paths = group[0], [p.path for p, _ in group]
        cause = PoolingShrinksMapAtOnce(
            tuple(paths),
            pool.name,
            tuple(int(n) for n in pool.size),
            tuple(int(n) for n in pool.out),
            len(later),
            later[0].layer.path,
        )
        yield ctx.finding(
            "info",
            paths[0] if len(group) == 1 else holder(paths),
            cause,
            list(dict.fromkeys([*(p.node for p, _ in group), later[0].layer.call])),
            subjects=paths,
        )

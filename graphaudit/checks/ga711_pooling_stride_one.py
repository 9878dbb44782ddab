"""GA711 pooling-stride-one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.graph.queries import shape_of
from graphaudit.text import listing

_POOLS = ("MaxPool1d", "MaxPool2d", "AvgPool1d", "AvgPool2d")


@dataclass(frozen=True)
class PoolingStrideOne(Cause):
    """Pooling cells with a kernel above 1 left at MindSpore's default stride of 1."""

    names_subjects = True
    paths: tuple[str, ...]  # the pooling cells
    pool: str  # the first one's class
    kernel_size: int | tuple[int, ...]  # the first one's kernel_size

    def message(self) -> str:
        return (
            f"{listing(self.paths)} ({self.pool}(kernel_size={self.kernel_size})) pool with stride 1: MindSpore's "
            "default stride is 1, PyTorch's is the kernel size, so a pooling ported as nn.MaxPool2d(k) shrinks the "
            "map by k-1 instead of dividing it by k."
        )

    def fix(self) -> str:
        return (
            "Give the stride: nn.MaxPool2d(kernel_size=k, stride=k); if a stride of 1 is meant, write stride=1 "
            'with pad_mode="same" or padding to keep the size.'
        )


def _ints(value: Any) -> tuple[int, ...]:
    if isinstance(value, int):
        return (value,)
    if isinstance(value, (tuple, list)):
        return tuple(int(v) for v in value)
    return ()


def stride_one_pool(cell: Any) -> bool:
    """A ``mindspore.nn`` max/avg pooling with a kernel above 1, stride 1 and ``pad_mode="valid"``."""
    kind = type(cell)
    if kind.__name__ not in _POOLS or not kind.__module__.startswith("mindspore.nn"):
        return False
    kernel, stride = _ints(vars(cell).get("kernel_size")), _ints(vars(cell).get("stride"))
    mode = str(vars(cell).get("pad_mode", "")).upper()
    return bool(kernel) and max(kernel) > 1 and bool(stride) and set(stride) == {1} and mode == "VALID"


_PADS = ("Pad", "ZeroPad", "ConstantPad", "ReflectionPad", "ReplicationPad")


def _padded_before(graph: Any, call: str) -> bool:
    """Whether the pooling's input comes straight from a padding: a stride of 1 that keeps the size, meant."""
    for source, _, d in graph.in_edges(call, data=True):
        if d["kind"] != g.FLOWS:
            continue
        attrs = graph.nodes[source]
        name = str(attrs.get("class_name") or attrs.get("op_type") or attrs.get("op") or "")
        if name.startswith(_PADS) or name.lower() in ("pad", "ops.pad"):
            return True
    return False


def _spatial(graph: Any, call: str) -> list[int]:
    for _, _, d in graph.out_edges(call, data=True):
        if d["kind"] == g.FLOWS:
            try:
                return list(shape_of(d))[2:]
            except (KeyError, TypeError, ValueError):  # no shape recorded, or not a list of numbers
                return []
    return []


@register(
    "GA711",
    "pooling-stride-one",
    severity="warning",
    needs=(TracedPass,),
    causes=(PoolingStrideOne,),
    once="one finding per network: every stride-1 pooling is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A MaxPool/AvgPool with a kernel above 1 and MindSpore's default stride of 1: it barely downsamples.

    What it does:
        Reports the ``mindspore.nn`` ``MaxPool1d/2d`` and ``AvgPool1d/2d`` cells built
        with a kernel above 1, stride 1 and ``pad_mode="valid"`` whose traced output is
        larger than 1 in some spatial dimension (a kernel as large as its input is a global
        pooling, and is not reported), unless its input comes straight from a padding
        (``nn.Pad``, ``nn.ZeroPad2d``, ``ops.pad``...): Res2Net pads by 1 and pools 3x3 with
        stride 1 on purpose, to smooth one split of its channels at the same size.

    Why is this bad:
        MindSpore 2.10's pooling cells default to ``stride=1`` (signature ``kernel_size=1,
        stride=1, pad_mode="valid"``), PyTorch's to ``stride=kernel_size``: ``nn.MaxPool2d(2)``
        ported from PyTorch turns an 8x8 map into 7x7 instead of 4x4 (measured). A fully
        convolutional network still runs, with feature maps, compute and receptive fields
        other than designed. A stride-1 pooling can be wanted (with ``pad_mode="same"`` it
        is not reported): a warning.

    Example:
        ```python
        self.pool = nn.MaxPool2d(2)  # ported from torch.nn.MaxPool2d(2)
        ```

    Use instead:
        ```python
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        ```
    """
    graph = ctx.graph
    found: list[tuple[str, str, Any]] = []
    for node, attrs in g.nodes_of_kind(graph, g.CALL):
        cell_node = attrs.get("cell", "")
        if (
            not cell_node
            or any(cell_node == known for known, _, _ in found)
            or not stride_one_pool(ctx.structure.cells.get(cell_node))
        ):
            continue
        spatial = _spatial(graph, node)
        if spatial and any(d > 1 for d in spatial) and not _padded_before(graph, node):
            kernel = vars(ctx.structure.cells[cell_node])["kernel_size"]
            found.append(
                (cell_node, attrs.get("class_name", ""), kernel if isinstance(kernel, int) else tuple(kernel))
            )
    if not found:
        return
    paths = tuple(ctx.cell_path(node) for node, _, _ in found)
    cause = PoolingStrideOne(paths, found[0][1], found[0][2])
    yield ctx.finding(
        "warning",
        paths[0] if len(paths) == 1 else "(root)",
        cause,
        tuple(node for node, _, _ in found),
        subjects=paths,
    )

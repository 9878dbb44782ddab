"""GA707 normalization-in-float16."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.precision import HALF, is_normalization, output_dtypes
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, listing


@dataclass(frozen=True)
class NormalizationInFloat16(Cause):
    """Normalisation cells that computed in float16 in the traced pass."""

    names_subjects = True
    cells: tuple[str, ...]  # their paths
    classes: tuple[str, ...]  # their classes, sorted, each once

    def message(self) -> str:
        return (
            f"{counted(len(self.cells), 'normalisation cell')} ({listing(self.classes, None)}) computed in float16 in the "
            f"traced pass: {listing(self.cells)}. Their statistics lose precision or overflow in float16."
        )

    def fix(self) -> str:
        return (
            'Keep normalisation in float32: amp.auto_mixed_precision(net, "O2") (or keep_batchnorm_fp32=True), '
            "or cell.to_float(ms.float32) on these cells."
        )


@register(
    "GA707",
    "normalization-in-float16",
    severity="warning",
    needs=(TracedPass,),
    once="one finding per network: every normalisation computed in float16 is listed in it",
    causes=(NormalizationInFloat16,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """BatchNorm, LayerNorm or GroupNorm computed in float16, as ``amp_level="O3"`` does.

    What it does:
        Reads the dtype of every normalisation cell's output in the traced forward pass
        and reports, as one finding, the cells that computed in float16.

    Why is this bad:
        Normalisation sums squares over a batch or a feature axis: in float16 (largest
        value 65504, 11 bits of precision) the variance overflows or loses its small
        terms, and BatchNorm's moving statistics drift. MindSpore's ``amp_level="O2"``
        keeps BatchNorm and LayerNorm in float32 for this reason (``keep_batchnorm_fp32``,
        ``mindspore.amp``'s black list); ``"O3"`` and ``net.to_float(ms.float16)`` cast
        them too. Measured on MindSpore 2.10: under O2 a BatchNorm2d's output is float32,
        under O3 float16. Some networks train acceptably in O3: a warning.

    Example:
        ```python
        net = amp.auto_mixed_precision(net, "O3")
        ```

    Use instead:
        ```python
        net = amp.auto_mixed_precision(net, "O2")  # float16 everywhere but the normalisation
        ```
    """
    graph = ctx.graph
    found: dict[str, str] = {}
    for node, attrs in g.nodes_of_kind(graph, g.CALL):
        cell = attrs.get("cell", "")
        if cell and is_normalization(attrs.get("class_name", "")) and HALF in output_dtypes(graph, node):
            found.setdefault(cell, attrs.get("class_name", ""))
    if not found:
        return
    paths = tuple(ctx.cell_path(cell) for cell in found)
    cause = NormalizationInFloat16(paths, tuple(sorted(set(found.values()))))
    yield ctx.finding(
        "warning", paths[0] if len(paths) == 1 else "(root)", cause, tuple(found), subjects=paths
    )

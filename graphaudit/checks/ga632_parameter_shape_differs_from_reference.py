"""GA632 parameter-shape-differs-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import ROOT, holder, pattern
from graphaudit.checks._shared.reference import ANOTHER, module_of, shape_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

if TYPE_CHECKING:  # at run time only the checks' own modules: importing capture imports MindSpore
    from graphaudit.capture.reference.mapping import Pair


@dataclass(frozen=True)
class ParameterShapeDiffersFromReference(Cause):
    """Port parameters whose shapes differ from the original weights they stand for, or are their transposes."""

    names_subjects = True
    ports: tuple[str, ...]  # the port's parameters, by path
    port_shapes: tuple[tuple[int, ...], ...]  # their shapes, in the same order
    references: tuple[str, ...]  # the original's weights they are paired with, in the same order
    reference_shapes: tuple[tuple[int, ...], ...]
    transposed: bool  # each is the transpose of the original's (else: another shape)

    def message(self) -> str:
        how = "the transpose of the original's" if self.transposed else "where the original has"
        said = [
            f"{port} is {shape_text(mine)}, {how} {reference} ({shape_text(theirs)})"
            for port, mine, reference, theirs in zip(
                self.ports, self.port_shapes, self.references, self.reference_shapes
            )
        ]
        return listing(said, separator="; ") + (
            ": the original's weights load into the port only transposed."
            if self.transposed
            else ": the layer is not the original's."
        )

    def fix(self) -> str:
        if self.transposed:
            return "Transpose the original's weight when converting it, or declare the layer as the original does."
        return "Give the layer the original's sizes (in and out channels, kernel, vocabulary)."


@register(
    "GA632",
    "parameter-shape-differs-from-reference",
    severity="error",
    needs=(ReferenceWeights,),
    causes=(ParameterShapeDiffersFromReference,),
    defers_to={"GA634": ANOTHER},
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A port parameter whose shape differs from the original weight it stands for, or is its transpose.

    What it does:
        For each pair of the mapping (GA630), compares the shapes (trailing 1s aside, which
        MindSpore loads through): a 2-D weight whose shape is the original's reversed is
        reported as stored transposed; any other difference as a shape that differs (a width,
        a kernel size, a vocabulary). An ONNX file stores a ``MatMul``'s weight ``(in, out)``
        whether the original did or its exporter folded a transpose: there, a 2-D weight
        either way round is left to the outputs' comparison.

    Why is this bad:
        A width or kernel that differs is a different network; a weight stored transposed
        means whatever loads the original's weights must transpose it, and a square one
        loaded without the transpose raises nothing and computes ``x @ W`` instead of
        ``x @ W.T``.

    Example:
        ```python
        self.proj = nn.Dense(64, 32)       # the original: nn.Linear(64, 48)
        ```

    Use instead:
        ```python
        self.proj = nn.Dense(64, 48)
        ```
    """
    weights = ctx.need(ReferenceWeights)
    # One cause, one finding: what one loop built alike (every block's q.weight loaded
    # transposed, a layer's weight and bias) is one finding, gathered by the cells' pattern.
    gathered: dict[tuple[str, bool], list[Pair]] = {}
    for pair in weights.mapping.pairs:
        if pair.layout != "same":
            key = (pattern(module_of(pair.port)), pair.layout == "transposed")
            gathered.setdefault(key, []).append(pair)
    for (_, transposed), pairs in gathered.items():
        cells = list(dict.fromkeys(module_of(pair.port) or ROOT for pair in pairs))
        cause = ParameterShapeDiffersFromReference(
            tuple(pair.port for pair in pairs),
            tuple(tuple(int(d) for d in weights.port_shapes[pair.port]) for pair in pairs),
            tuple(pair.reference for pair in pairs),
            tuple(tuple(int(d) for d in weights.reference_shapes[pair.reference]) for pair in pairs),
            transposed,
        )
        yield ctx.finding(
            "error",
            cells[0] if len(cells) == 1 else holder(cells),
            cause,
            tuple(weights.port_nodes[pair.port] for pair in pairs),
            subjects=cause.ports,
        )

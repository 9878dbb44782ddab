"""GA640 output-diverges-from-reference."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import ROOT
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_outputs import ReferenceOutputs
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class CellOutputDiverges(Cause):
    """With the original's weights and batch, a cell returns something else while its input agrees."""

    names_subjects = True
    cell: str  # the port's cell, by path
    original: str  # the original's module it stands for ("" for the model)
    figures: str  # msprobe's figures of its output, as the comparison words them ("": not of the same shape)
    scale: float | None  # the largest magnitude of the original's output
    shapes: str = ""  # both outputs' shapes, when they differ

    def message(self) -> str:
        said = (
            f"{self.figures} (largest value {self.scale:.3g})"
            if self.figures
            else f"a tensor of another shape ({self.shapes})"
        )
        return (
            f"With the original's weights and batch, {self.cell} (the original's {self.original or 'model'}) "
            f"returns something else while its input agrees: {said}; everything before it agreed."
        )

    def fix(self) -> str:
        return (
            f"Make {self.cell} compute what the original's {self.original or 'model'} computes: its layer kind, "
            "activation, axis, scale and constants."
        )


@dataclass(frozen=True)
class CallerChangesInput(Cause):
    """With the original's weights and batch, a cell is given an input that differs: its caller's construct made it."""

    names_subjects = True
    cell: str  # the port's cell given the input, by path
    caller: str  # the cell whose construct calls it ((root): the network itself)
    figures: str  # msprobe's figures of the input, as the comparison words them ("": not of the same shape)
    shapes: str = ""  # both inputs' shapes, when they differ

    def message(self) -> str:
        said = self.figures if self.figures else f"of another shape: {self.shapes}"
        return (
            f"With the original's weights and batch, {self.cell} is given an input that differs "
            f"({said}) while everything before it agreed: the difference is made in "
            f"{self.caller}'s construct, before it calls {self.cell} (a reshape or flatten order, a residual, a "
            "scale, the order of its layers, an operation outside any cell)."
        )

    def fix(self) -> str:
        return (
            f"Compare {self.caller}'s construct with the original's forward, line by line, up to its call of "
            f"{self.cell}."
        )


@register(
    "GA640",
    "output-diverges-from-reference",
    severity="error",
    needs=(ReferenceOutputs,),
    once="one finding per audit: every cell after the first divergence diverges because of it",
    causes=(CellOutputDiverges, CallerChangesInput),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The port, given the original's weights and batch, computes something else: the first cell where it starts.

    What it does:
        With ``reference=`` a folder written by ``python -m graphaudit.reference`` (the
        original's weights and what each of its modules computed on one batch), loads the
        original's weights into the port (restored afterwards, bit for bit), runs it on that
        batch in inference mode and sets each cell's output against the output of the
        original's module that cell stands for, in the order the calls return. It reports
        the first point, in execution order, where the two diverge (beyond the rounding of
        the dtype): a cell whose output differs while its input (and every cell it called)
        agreed computes something else, and is named; a cell given an input that differs
        while everything before agreed shows that the construct calling it made the
        difference (a reshape or flatten in another order, a residual left out, a scale, the
        layers' order, an operation outside any cell): that caller is named. The message
        gives msprobe's figures: cosine similarity, the largest absolute and relative errors.

    Why is this bad:
        The same weights and the same batch give another result: the port is not the
        original, whatever its structure says (a flatten in NHWC order, an activation
        swapped, a softmax over another axis, a forgotten attention scale). It trains, to a
        worse accuracy, and converted pretrained weights are worth nothing in it.

    Example:
        ```python
        class Port(nn.Cell):            # the original flattens (N, C, H, W) as it is
            def construct(self, x):
                x = self.features(x)
                return self.fc(x.transpose(0, 2, 3, 1).reshape(x.shape[0], -1))
        graphaudit.audit(Port(), reference="original_dump/")
        ```

    Use instead:
        ```python
        return self.fc(x.reshape(x.shape[0], -1))   # the original's order
        ```
    """
    found = ctx.need(ReferenceOutputs).comparison.first_divergence()
    if found is None:
        return
    first, at = found
    where = first.port or ROOT
    by_path = ctx.cell_nodes_by_path()
    cause: Cause
    if at == "output":
        subject, node = where, by_path.get(first.port)
        figures = first.output
        cause = CellOutputDiverges(
            where,
            first.reference,
            figures.text() if figures is not None else "",
            float(figures.scale) if figures is not None else None,
            first.shapes if figures is None else "",
        )
    else:
        caller = first.caller or ""
        subject, node = caller or ROOT, by_path.get(caller)
        figures = first.input
        cause = CallerChangesInput(
            where,
            subject,
            figures.text() if figures is not None else "",
            first.input_shapes if figures is None else "",
        )
    yield ctx.finding("error", subject, cause, (node,) if node is not None else ())

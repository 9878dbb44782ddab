"""GA640 output-diverges-from-reference."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import ROOT
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference_outputs import ReferenceOutputs
from graphaudit.findings import Finding


@register(
    "GA640",
    "output-diverges-from-reference",
    severity="error",
    needs=(ReferenceOutputs,),
    once="one finding per audit: every cell after the first divergence diverges because of it",
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
    by_path = g.cell_nodes_by_path(ctx.graph)
    if at == "output":
        subject, node = where, by_path.get(first.port)
        said = (
            f"{first.output.text()} (largest value {first.output.scale:.3g})"
            if first.output is not None
            else f"a tensor of another shape ({first.shapes})"
        )
        message = (
            f"With the original's weights and batch, {where} (the original's {first.reference or 'model'}) "
            f"returns something else while its input agrees: {said}; everything before it agreed."
        )
        fix = (
            f"Make {where} compute what the original's {first.reference or 'model'} computes: its layer kind, "
            "activation, axis, scale and constants."
        )
    else:
        caller = first.caller or ""
        subject, node = caller or ROOT, by_path.get(caller)
        said = first.input.text() if first.input is not None else f"of another shape: {first.input_shapes}"
        message = (
            f"With the original's weights and batch, {where} is given an input that differs "
            f"({said}) while everything before it agreed: the difference is made in "
            f"{subject}'s construct, before it calls {where} (a reshape or flatten order, a residual, a scale, "
            "the order of its layers, an operation outside any cell)."
        )
        fix = f"Compare {subject}'s construct with the original's forward, line by line, up to its call of {where}."
    yield ctx.finding("error", subject, message, fix, (node,) if node is not None else ())

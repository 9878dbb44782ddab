"""GA630 reference-weight-missing-in-port."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import ROOT
from graphaudit.checks._shared.reference import by_module, named, port_cell, shape_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Finding

#: Below this share of the original's weights paired, the reference is another model (GA634 says so).
ANOTHER_MODEL = 0.5


@register("GA630", "reference-weight-missing-in-port", severity="error", needs=(ReferenceWeights,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A weight of the original with no counterpart in the port: a layer or a bias left out.

    What it does:
        Pairs the original's weights (``reference=``: a ``.safetensors``, ``.pth``/``.bin`` or
        ``.onnx`` file, or a dict) with the port's parameters by name (MindSpore's ``gamma``,
        ``beta``, ``moving_mean``, ``moving_variance`` and ``embedding_table`` read as
        PyTorch's ``weight``, ``bias``, ``running_mean``, ``running_var`` and ``weight``), by a
        prefix that differs, then by module order and shape, and reports every weight of the
        original left without a partner, gathered by module. Integer tensors
        (``position_ids``, ``num_batches_tracked``) are buffers and never reported; a weight
        the original ties to one the port has (and ties too) is not missing. When most of the
        original is unmatched, GA634 says so once instead.

    Why is this bad:
        A port that drops a layer or a bias still runs and trains, to a worse accuracy than
        the original, and loading the original's weights into it only logs what it did not
        load. The article's §3.2 lists a structure unlike the design among the silent
        accuracy problems; a port is designed by its original.

    Example:
        ```python
        class Port(nn.Cell):               # the original: nn.Linear(16, 8), nn.Linear(8, 2)
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Dense(16, 8, has_bias=False)     # PyTorch's Linear has a bias
                self.fc2 = nn.Dense(8, 2)
        graphaudit.audit(Port(), reference="original.safetensors")
        ```

    Use instead:
        ```python
        self.fc1 = nn.Dense(16, 8)         # as the original
        ```
    """
    weights = ctx.need(ReferenceWeights)
    if weights.matched_fraction() < ANOTHER_MODEL:
        return  # another model entirely: GA634's one finding, not one per weight
    paired = {pair.reference for pair in weights.mapping.pairs}
    tied_to_paired = {
        name for tie in weights.reference_ties if paired & set(tie) for name in tie if name not in paired
    }
    missing = [n for n in weights.mapping.reference_only if n not in tied_to_paired]
    for module, leaves in by_module(missing).items():
        cell, own = port_cell(ctx, weights, module)
        shapes = ", ".join(
            shape_text(weights.reference_shapes[f"{module}.{leaf}" if module else leaf]) for leaf in leaves
        )
        subject = (ctx.graph.nodes[cell]["path"] if own else module) or ROOT
        them = "it" if len(leaves) == 1 else "them"
        where = "the port has no such layer"
        if own:
            where = (
                f"the port's {subject} has no parameter for {them}"
                if subject != ROOT
                else f"the port has no parameter for {them}"
            )
        what = "a bias left out" if own and leaves == ["bias"] else "left out" if own else "a layer left out"
        yield ctx.finding(
            "error",
            subject,
            f"The original ({weights.label}) has {named(module, leaves)} ({shapes}) and {where}: {what}.",
            "Add what the original has (a bias: has_bias=True; a layer) to the port; if the port has it under "
            "a name the mapping cannot pair, say so: reference_map={'port.name': 'original.name'}.",
            (cell,),
            subjects=tuple(f"{module}.{leaf}" if module else leaf for leaf in leaves),
        )

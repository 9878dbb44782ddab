"""GA630 reference-weight-missing-in-port."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import ROOT, holder, pattern
from graphaudit.checks._shared.reference import ANOTHER, by_module, port_cell, shape_text
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.reference import ReferenceWeights
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing, pronouns


@dataclass(frozen=True)
class ReferenceWeightMissingInPort(Cause):
    """Weights of the original the port has no parameter for: a bias or a layer left out.

    *cells* are the port's cells that have no parameter for them, when the port has their
    modules; empty when it has no such layer at all.
    """

    names_subjects = True
    original: str  # the reference's label (its file's name)
    names: tuple[str, ...]  # the original's weights, by name
    shapes: tuple[tuple[int, ...], ...]  # their shapes in the original, in the same order
    cells: tuple[str, ...]  # the port's cells that stand for their modules, by path

    def message(self) -> str:
        shapes = listing([f"{name} ({shape_text(shape)})" for name, shape in zip(self.names, self.shapes)])
        if self.cells:
            has = "has" if len(self.cells) == 1 else "have"
            where = (
                f"the port's {listing(self.cells)} {has} no parameter for {pronouns(len(self.names)).object}"
            )
            what = (
                "a bias left out"
                if all(name.rpartition(".")[2] == "bias" for name in self.names)
                else "left out"
            )
        else:
            where, what = "the port has no such layer", "a layer left out"
        return f"The original ({self.original}) has {shapes} and {where}: {what}."

    def fix(self) -> str:
        return (
            "Add what the original has (a bias: has_bias=True; a layer) to the port; if the port has it under "
            "a name the mapping cannot pair, say so: reference_map={'port.name': 'original.name'}."
        )


@register(
    "GA630",
    "reference-weight-missing-in-port",
    severity="error",
    needs=(ReferenceWeights,),
    causes=(ReferenceWeightMissingInPort,),
    defers_to={"GA634": ANOTHER},
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A weight of the original with no counterpart in the port: a layer or a bias left out.

    What it does:
        Pairs the original's weights (``reference=``: a ``.safetensors``, ``.pth``/``.bin`` or
        ``.onnx`` file, or a dict) with the port's parameters by name (MindSpore's ``gamma``,
        ``beta``, ``moving_mean``, ``moving_variance`` and ``embedding_table`` read as
        PyTorch's ``weight``, ``bias``, ``running_mean``, ``running_var`` and ``weight``), by a
        prefix that differs, then by module order and shape, and reports every weight of the
        original left without a partner: one finding for a parameter missing from every cell
        one loop built alike (a bias in every block), one for the layers missing under one cell. Integer tensors
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
    missing = weights.missing()
    # One cause, one finding: the same parameter missing from every cell one loop built alike
    # (a Dense without bias in each block), or every layer missing under one cell of the port
    # (a stack cut short), is one finding.
    gathered: dict[tuple[str, ...], list[tuple[str, str]]] = {}
    for module, leaves in by_module(missing).items():
        cell, own = port_cell(ctx, weights, module)
        path = ctx.graph.nodes[cell]["path"]
        key = ("own", pattern(path), *leaves) if own else ("layer", cell)
        gathered.setdefault(key, []).extend((module, leaf) for leaf in leaves)
    for key, members in gathered.items():
        names = tuple(f"{module}.{leaf}" if module else leaf for module, leaf in members)
        shapes = tuple(tuple(int(d) for d in weights.reference_shapes[name]) for name in names)
        if key[0] == "own":
            cells = list(dict.fromkeys(port_cell(ctx, weights, module)[0] for module, _ in members))
            paths = tuple(ctx.graph.nodes[c]["path"] or ROOT for c in cells)
            subject = paths[0] if len(paths) == 1 else holder(list(paths))
        else:
            cells, paths = [key[1]], ()
            tops = list(dict.fromkeys(_top_missing(ctx, module) for module, _ in members))
            subject = tops[0] if len(tops) == 1 else holder(tops)
        cause = ReferenceWeightMissingInPort(weights.label, names, shapes, paths)
        yield ctx.finding("error", subject, cause, tuple(cells), subjects=names)


def _top_missing(ctx: AuditContext, module: str) -> str:
    """The outermost path of *module* the port has no cell for: ``layers.3`` for ``layers.3.fc``."""
    by_path = ctx.cell_nodes_by_path()
    parts = module.split(".")
    for end in range(1, len(parts) + 1):
        if ".".join(parts[:end]) not in by_path:
            return ".".join(parts[:end])
    return module or ROOT

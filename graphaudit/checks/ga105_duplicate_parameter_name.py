"""GA105 duplicate-parameter-name."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing


@dataclass(frozen=True)
class DuplicateParameterName(Cause):
    """Names each carried by several distinct Parameter objects (the names clashing between the same cells)."""

    names_subjects = True
    names: tuple[str, ...]  # the clashing Parameter.name values
    objects: int  # how many Parameter objects carry the first
    paths: tuple[str, ...]  # their attribute paths

    def message(self) -> str:
        if len(self.names) == 1:
            what = f"{self.objects} distinct Parameter objects are named {self.names[0]!r} (at {listing(self.paths, None)})"
            keeps = "a checkpoint keeps only one of them under that name"
        else:
            what = (
                f"{len(self.names)} names ({listing([repr(n) for n in self.names])}) are each carried by "
                f"{self.objects} distinct Parameter objects (the first at {listing(self.paths, None)})"
            )
            keeps = "a checkpoint keeps only one parameter under each name"
        return f"{what}: {keeps}, and optimizers reject the network."

    def fix(self) -> str:
        return (
            "Give each parameter a unique name: keep auto_prefix=True on the enclosing cells, do not pass "
            "the same explicit name= to parameters of different cells, and do not assign Parameter.name."
        )


@register("GA105", "duplicate-parameter-name", severity="error", causes=(DuplicateParameterName,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Two distinct Parameter objects with the same name.

    What it does:
        Reports each ``Parameter.name`` carried by more than one Parameter object of the network;
        the names that clash between the same cells (a weight and a bias, every parameter of
        the layers under one ``auto_prefix=False``) are one finding.

    Why is this bad:
        MindSpore keys parameters by name. ``save_checkpoint`` writes one entry per name, so
        all but one of the clashing parameters are silently missing from the checkpoint (two
        parameters named ``w`` give a checkpoint with the single key ``w``), and loading it
        puts one tensor's values in both. Optimizers refuse the network
        (``ValueError: ... its name 'w' already exists``). Names clash when a cell is built with
        ``auto_prefix=False`` around sub-cells that create ``Parameter(..., name="w")``, or when
        code assigns ``param.name``.

    Example:
        ```python
        class Scale(nn.Cell):
            def __init__(self):
                super().__init__()
                self.w = Parameter(Tensor(np.ones(4, np.float32)), name="w")

        class Net(nn.Cell):
            def __init__(self):
                super().__init__(auto_prefix=False)  # sub-cell names are not prefixed
                self.a, self.b = Scale(), Scale()   # both parameters are named "w"
        ```

    Use instead:
        ```python
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()  # auto_prefix=True: "a.w" and "b.w"
                self.a, self.b = Scale(), Scale()
        ```
    """
    causes: dict[tuple[str, ...], list[tuple[str, list[str], list[str]]]] = {}
    for name, all_nodes in g.parameter_nodes_by_name(ctx.graph).items():
        # Unregistered parameters (GA303) are not saved or optimized, so they cannot clash.
        nodes = [n for n in all_nodes if ctx.graph.nodes[n].get("registered", True)]
        if len(nodes) < 2:
            continue
        paths = [ctx.graph.nodes[n]["path"] for n in nodes]
        # One auto_prefix=False (or one name= in a layer) clashes every parameter of the same cells.
        causes.setdefault(tuple(p.rpartition(".")[0] for p in paths), []).append((name, nodes, paths))
    for clashes in causes.values():
        name, nodes, paths = clashes[0]
        names = tuple(n for n, _, _ in clashes)
        yield ctx.finding(
            "error",
            name if len(clashes) == 1 else holder([p for _, _, ps in clashes for p in ps]),
            DuplicateParameterName(names, len(nodes), tuple(paths)),
            [n for _, ns, _ in clashes for n in ns],
            subjects=names if len(clashes) > 1 else (),
        )

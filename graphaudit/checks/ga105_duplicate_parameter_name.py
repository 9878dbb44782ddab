"""GA105 duplicate-parameter-name."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import holder, listing
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Finding


@register("GA105", "duplicate-parameter-name", severity="error")
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
        if len(clashes) == 1:
            what = f"{len(nodes)} distinct Parameter objects are named {name!r} (at {', '.join(paths)})"
            keeps = "a checkpoint keeps only one of them under that name"
        else:
            names = [n for n, _, _ in clashes]
            what = (
                f"{len(clashes)} names ({listing([repr(n) for n in names])}) are each carried by {len(nodes)} "
                f"distinct Parameter objects (the first at {', '.join(paths)})"
            )
            keeps = "a checkpoint keeps only one parameter under each name"
        yield ctx.finding(
            "error",
            name if len(clashes) == 1 else holder([p for _, _, ps in clashes for p in ps]),
            f"{what}: {keeps}, and optimizers reject the network.",
            "Give each parameter a unique name: keep auto_prefix=True on the enclosing cells, do not pass "
            "the same explicit name= to parameters of different cells, and do not assign Parameter.name.",
            [n for _, ns, _ in clashes for n in ns],
            subjects=[n for n, _, _ in clashes] if len(clashes) > 1 else (),
        )

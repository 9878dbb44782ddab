"""GA712 graph-mode-compile-failure."""

from __future__ import annotations

import os
from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.graph_mode import GraphModeRun
from graphaudit.findings import Finding


@register(
    "GA712",
    "graph-mode-compile-failure",
    severity="error",
    needs=(GraphModeRun,),
    once="one finding per network: it compiles in GRAPH_MODE or it does not",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The network (or its training step) runs in PyNative but does not compile in GRAPH_MODE.

    What it does:
        With ``graph_mode=True``, compiles the network in ``GRAPH_MODE`` on the traced batch,
        and the training step when an optimizer and a loss are given, and reports a
        compile failure on the cell whose code holds the failing line, with the file, the
        line, and MindSpore's own sentence (not its C++ stack). The context is put back and
        MindSpore's ``analyze_fail.ir`` dump is written to a temporary folder, then deleted.
        When a PyNative script compiles parts of the network with ``mindspore.jit``, exactly
        those parts are compiled, as the script runs them (the forward pass and one training
        step), not the whole network.

    Why is this bad:
        ``construct`` is compiled from its Python source under MindSpore's static-graph
        syntax: a network debugged in PyNative can fail on the cluster where training runs
        in graph mode, after data loading and setup (the article's §3.1: "construct
        constraints"). Measured on MindSpore 2.10: ``try``/``except``, a ``yield``, a
        variable assigned in one branch of an ``if`` only ("The local variable 'out' is not
        defined in false branch") all fail to compile.

    Example:
        ```python
        def construct(self, x):
            if x.sum() > 0:
                out = self.fc(x)
            return out
        ```

    Use instead:
        ```python
        def construct(self, x):
            out = self.fc(x)
            if x.sum() > 0:
                out = out * 2
            return out
        ```
    """
    run = ctx.need(GraphModeRun)
    failure = run.result.failure
    if failure is None:
        return
    node = run.cell or g.cell_node("")
    path = ctx.cell_path(node) if node in ctx.graph else "(root)"
    where = (
        f" at {os.path.basename(run.file)}:{run.line}" + (f" (`{run.code}`)" if run.code else "")
        if run.file
        else ""
    )
    cell = ctx.structure.cells.get(node)
    owner = f"{path} ({type(cell).__name__})" if cell is not None else path
    compiled = "with mindspore.jit" if run.result.how == "jit" else "in GRAPH_MODE"
    instead = "remove its @jit" if run.result.how == "jit" else "train in PyNative mode"
    yield ctx.finding(
        "error",
        path,
        f"{failure.stage[0].upper()}{failure.stage[1:]} does not compile {compiled}: in {owner}{where}, "
        f"MindSpore says {failure.error}: {failure.summary}",
        "Rewrite that line within MindSpore's static-graph syntax (see 'Static Graph Syntax Support' in "
        "MindSpore's documentation): define every variable on every branch, no try/except or generators, "
        f"no Python-side state changed in construct; or {instead}.",
        (node,),
    )

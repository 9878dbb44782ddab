"""GA712 graph-mode-compile-failure."""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.graph_mode import GraphModeRun
from graphaudit.findings import Cause, Finding


@dataclass(frozen=True)
class GraphModeCompileFailure(Cause):
    """The network or its training step does not compile in GRAPH_MODE (or with mindspore.jit)."""

    stage: str  # what was compiled ("the forward pass", "the training step")
    jit: bool  # compiled as the script's mindspore.jit code, not the whole network in GRAPH_MODE
    path: str  # the cell whose code holds the failing line
    cell_class: str | None  # that cell's class, when the network holds it
    file: str | None  # the failing line's file (its base name)
    line: int | None
    code: str  # the failing line's source (empty when unknown)
    error: str  # MindSpore's error class
    summary: str  # MindSpore's own sentence

    def message(self) -> str:
        where = (
            f" at {self.file}:{self.line}" + (f" (`{self.code}`)" if self.code else "") if self.file else ""
        )
        owner = f"{self.path} ({self.cell_class})" if self.cell_class is not None else self.path
        compiled = "with mindspore.jit" if self.jit else "in GRAPH_MODE"
        return (
            f"{self.stage[0].upper()}{self.stage[1:]} does not compile {compiled}: in {owner}{where}, "
            f"MindSpore says {self.error}: {self.summary}"
        )

    def fix(self) -> str:
        instead = "remove its @jit" if self.jit else "train in PyNative mode"
        return (
            "Rewrite that line within MindSpore's static-graph syntax (see 'Static Graph Syntax Support' in "
            "MindSpore's documentation): define every variable on every branch, no try/except or generators, "
            f"no Python-side state changed in construct; or {instead}."
        )


@register(
    "GA712",
    "graph-mode-compile-failure",
    severity="error",
    needs=(GraphModeRun,),
    causes=(GraphModeCompileFailure,),
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
    cell = ctx.structure.cells.get(node)
    cause = GraphModeCompileFailure(
        failure.stage,
        run.result.how == "jit",
        path,
        type(cell).__name__ if cell is not None else None,
        os.path.basename(run.file) if run.file else None,
        run.line,
        run.code,
        failure.error,
        failure.summary,
    )
    yield ctx.finding("error", path, cause, (node,))

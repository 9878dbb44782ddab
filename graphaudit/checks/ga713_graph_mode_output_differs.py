"""GA713 graph-mode-output-differs."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.graph_mode import GraphModeRun
from graphaudit.findings import Cause, Finding

TOLERANCE = 1e-3  # relative to the largest output value; kernel and fusion differences are ~1e-6


@dataclass(frozen=True)
class GraphModeOutputDiffers(Cause):
    """The network computes another output compiled (GRAPH_MODE or mindspore.jit) than in PyNative."""

    network: str  # the network's class
    jit: bool  # its mindspore.jit code compiled, not the whole network in GRAPH_MODE
    mismatch: str  # a structural difference (count, shape, dtype) as the comparison describes it, if any
    max_difference: float
    scale: float  # the largest output value
    tolerance: float  # the largest difference allowed, relative to the scale

    @property
    def relative(self) -> float:
        return self.max_difference / self.scale if self.scale > 0 else self.max_difference

    def message(self) -> str:
        detail = self.mismatch or (
            f"the outputs differ by up to {self.max_difference:.3g} (the largest output value is {self.scale:.3g}: "
            f"{self.relative:.2%}, above {self.tolerance:g})"
        )
        compiled = "with its mindspore.jit code compiled" if self.jit else "in GRAPH_MODE"
        return (
            f"{self.network} computes another output {compiled} than in PyNative on the same batch: "
            f"{detail}. Code whose meaning depends on running line by line (in-place writes through an alias, "
            "Python state changed in construct) compiles to something else."
        )

    def fix(self) -> str:
        return (
            "Look in construct for in-place writes on a tensor that another name also refers to (x[i] = ..., "
            "+= on a view), attributes changed in construct, and Python-side random or time values; write them "
            "as functional operations."
        )


@register(
    "GA713",
    "graph-mode-output-differs",
    severity="warning",
    needs=(GraphModeRun,),
    causes=(GraphModeOutputDiffers,),
    once="one finding per network: its one output compared in the two modes",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """GRAPH_MODE computes another output than PyNative on the same batch.

    What it does:
        With ``graph_mode=True``, runs the network in inference mode (``set_train(False)``:
        no Dropout, BatchNorm on its moving statistics) once in PyNative and once in
        ``GRAPH_MODE`` on copies of the traced batch, and reports a difference above 1e-3
        of the largest output value, or outputs of other shapes or dtypes. When a PyNative
        script compiles parts of the network with ``mindspore.jit``, the network runs as
        written (those parts compiled) and as Python (``MS_JIT=0``).

    Why is this bad:
        Graph mode compiles ``construct``; code whose meaning depends on Python running it
        line by line then computes something else, silently: an in-place write through an
        alias (``y = x; y[0] = 0``: PyNative changes ``x`` too, graph mode copies), Python
        state changed in ``construct`` (``self.calls += 1``), values folded at compile time.
        The network is then validated in one mode and trained in the other (§3.1 of the
        article). Measured on MindSpore 2.10, the same network differs by about 1e-7 between
        the modes; the bound is 1e-3 of the output's scale. A warning: float16 networks
        can differ more.

    Example:
        ```python
        def construct(self, x):
            h = self.fc(x)
            g = h
            g[:, 0] = 0.0          # PyNative: h changes too; graph mode: only g
            return self.out(h) + g
        ```

    Use instead:
        ```python
        def construct(self, x):
            h = self.fc(x)
            g = ops.concat((ops.zeros_like(h[:, :1]), h[:, 1:]), axis=1)
            return self.out(h) + g
        ```
    """
    result = ctx.need(GraphModeRun).result
    if result.failure is not None:
        return
    relative = result.max_difference / result.scale if result.scale > 0 else result.max_difference
    if not result.mismatch and relative <= TOLERANCE:
        return
    cause = GraphModeOutputDiffers(
        type(ctx.net).__name__,
        result.how == "jit",
        result.mismatch,
        float(result.max_difference),
        float(result.scale),
        TOLERANCE,
    )
    yield ctx.finding("warning", "(root)", cause, (g.cell_node(""),))

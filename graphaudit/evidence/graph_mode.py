"""The network compiled in GRAPH_MODE and compared with PyNative (``audit(..., graph_mode=True)``).

Made by :func:`graphaudit.capture.compilation.graph_mode.run_in_graph_mode` on the traced batch: a
compile failure (of the forward pass, or of the training step when an optimizer and a loss
are given) with the cell whose ``construct`` holds the failing line, or the largest
difference between the two modes' outputs. The global context, the parameters and the
flags are put back; MindSpore's ``analyze_fail.ir`` goes to a temporary folder, deleted.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> x = Tensor(np.ones((2, 3), np.float32))
    >>> run = EvidenceSet(AuditRequest(nn.Dense(3, 2), inputs=(x,), options={"graph_mode": True})).need(GraphModeRun)
    >>> run.result.failure is None, run.result.compared
    (True, 1)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.trace import TracedPass

if TYPE_CHECKING:
    from graphaudit.capture.compilation.graph_mode import GraphModeResult

__all__ = ["GraphModeRun"]


def _compiles_parts(graph: Any) -> bool:
    """The user compiles parts of the network with ``mindspore.jit`` in a PyNative script.

    A script in GRAPH_MODE compiles the whole network (its root is marked ``graph-mode``); so
    does the check when the user compiles nothing: it asks whether the network would compile.
    """
    from graphaudit.graph.queries import compiled_cells

    compiled = compiled_cells(graph)
    return bool(compiled) and not any(c["how"] == "graph-mode" for c in compiled)


@dataclass(frozen=True)
class GraphModeRun(Evidence):
    """What compiling in GRAPH_MODE gave, and the cell node where a compile failed (when found)."""

    title = "the network compiled and run in GRAPH_MODE"
    requirement = Requirement("pass graph_mode=True with inputs=(x, ...)", "give --graph-mode with --input")
    needs = (TracedPass,)
    options = (
        Option(
            "graph_mode",
            "also compile the network (and its training step) in GRAPH_MODE and compare its output with "
            "PyNative's (GA712, GA713; the context is put back)",
            flag="--graph-mode",
            cli_value="flag",
        ),
    )

    result: GraphModeResult
    cell: str | None = None  # the cell node the failure comes from
    file: str | None = None  # and where, after following a sub-cell's call into its own code
    line: int | None = None
    code: str = ""

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> GraphModeRun | Missing:
        if not request.option("graph_mode"):
            return Missing()
        from graphaudit.capture.compilation.graph_mode import run_in_graph_mode
        from graphaudit.capture.training.loss_scale import find_train_cell

        graph = have.need(NetworkGraph).graph
        result = run_in_graph_mode(
            request.net,
            request.inputs,
            optimizer=request.optimizer,
            loss_fn=request.loss_fn,
            label=request.label,
            returns_loss=request.loss_inside,
            train_cell=find_train_cell(request.given),
            jit_boundaries=_compiles_parts(graph),
        )
        failure = result.failure
        if failure is None:
            return cls(result)
        from graphaudit.capture.compilation.failure_source import locate

        cells = have.need(NetworkGraph).structure.cells
        return cls(
            result, *locate(cells, failure.file, failure.line, failure.code, failure.span, failure.summary)
        )

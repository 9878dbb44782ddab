"""The loss, traced on the network's output (``audit(..., loss_fn=..., inputs=...)``).

Made when a loss is given (as ``loss_fn=``, or inside a ``WithLossCell``, a
``TrainOneStepCell`` or a ``Model``) and the forward pass is traced. A MindSpore loss class
is known by its class even when tracing it fails; a user-written loss that cannot be traced
is missing, with the reason, so that the loss-pairing checks say they could not judge it,
and so is the loss of a network that computes it without a loss cell (``ops.CTCLoss`` inside
the network a ``TrainOneStepCell`` trains).

Example:
    >>> import numpy as np
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> x = Tensor(np.ones((2, 3), np.float32))
    >>> request = AuditRequest(nn.Dense(3, 1), inputs=(x,), loss_fn=nn.BCEWithLogitsLoss())
    >>> EvidenceSet(request).need(LossTrace).name
    'BCEWithLogitsLoss'
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.trace import TracedPass

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["LossTrace"]


@dataclass(frozen=True)
class LossTrace(Evidence):
    """The loss cell and, when it could be traced, the graph of ``loss_fn(output, label)``."""

    title = "the loss, traced on the network's output"
    requirement = Requirement(
        "pass loss_fn=... (or a WithLossCell, TrainOneStepCell or Model holding the loss) and inputs=(x, ...)",
        "give a loss (a factory returning (net, optimizer, loss_fn), or a WithLossCell) and --input",
    )
    needs = (TracedPass,)

    loss_fn: Any
    graph: nx.MultiDiGraph | None = None
    logits: tuple[str, ...] = (
        "output:0",
    )  # where, in the network's graph, the loss's first input comes from
    inside: bool = False  # the network calls the loss itself: it is traced in the network's graph
    output_to_float32: bool = False  # the training setup casts the output to float32 first (amp)

    @property
    def name(self) -> str:
        """The loss cell's class name: the subject of every loss-pairing finding."""
        return type(self.loss_fn).__name__

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> LossTrace | Missing:
        made = cls._traced(request, have)
        if isinstance(made, Missing):
            return made
        return replace(
            made, inside=request.loss_inside, output_to_float32=casts_output_to_float32(request.given)
        )

    @classmethod
    def _traced(cls, request: AuditRequest, have: EvidenceSet) -> LossTrace | Missing:
        if request.loss_fn is None and request.loss_inside:
            return Missing(
                f"{type(request.net).__name__} computes its loss itself (it is what the training step "
                "differentiates) and holds no loss cell, so there is no loss to trace"
            )
        if request.loss_fn is None:
            return Missing()
        if request.loss_inside:
            return cls._inside(request, have)
        traced = have.need(NetworkGraph).loss
        if traced is not None and traced.refused is not None:
            return Missing(
                f"the loss {type(request.loss_fn).__name__} refused the label given to it "
                f"({traced.refused}); GA060 says what it wants"
            )
        user_written = not (type(request.loss_fn).__module__ or "").startswith("mindspore.")
        if (traced is None or traced.graph is None) and user_written:
            failure = traced.failure if traced is not None else "it was not traced"
            return Missing(
                f"the loss {type(request.loss_fn).__name__} could not be traced on the network's "
                f"output ({failure}); pass label=... with a real label so that it runs as in training "
                "(a tuple for a loss that takes more: label=(targets, imgs) for loss_fn(output, targets, imgs))"
            )
        if traced is None or traced.graph is None:
            return cls(request.loss_fn, None)
        first = getattr(traced, "first_tensors", 1)  # the loss's first argument: the output's first tensors
        return cls(request.loss_fn, traced.graph, tuple(f"output:{i}" for i in range(first)))

    @classmethod
    def _inside(cls, request: AuditRequest, have: EvidenceSet) -> LossTrace | Missing:
        from graphaudit.capture.training.loss import loss_inside

        network = have.need(NetworkGraph)
        node = network.structure.cell_nodes.get(id(request.loss_fn))
        found = loss_inside(network.graph, node) if node is not None else None
        if found is None:
            return Missing(
                f"the loss {type(request.loss_fn).__name__} inside {type(request.net).__name__} was not "
                "called in the traced forward pass"
            )
        graph, logits = found
        return cls(request.loss_fn, graph, logits)


def casts_output_to_float32(given: Any) -> bool:
    """Whether the training setup *given* casts the network's output to float32 before the loss (amp's wrappers)."""
    root = given
    if type(given).__name__ == "Model":
        root = getattr(given, "_train_network", None) or getattr(given, "_network", None)
    if not hasattr(root, "cells_and_names"):
        return False
    for _, cell in root.cells_and_names():
        kind = type(cell)
        if kind.__name__ == "_OutputTo32" or (
            kind.__module__ == "mindspore.train.amp" and "Loss" in kind.__name__
        ):
            return True
    return False

"""How the network's time-major recurrent layers are fed: over time, or over the batch.

A ``batch_first=False`` ``nn.LSTM``/``GRU``/``RNN`` (MindSpore's default) reads
``(time, batch, features)``; fed ``(batch, time, features)`` its hidden state runs from sample
to sample. Which axis of the network's input is the batch is decided from the label, the
training pipeline's batch size or a convolution reading the input
(:mod:`graphaudit.capture.dependency.layout`); the layer's traced input then says whether its
axis 1 is the batch. :func:`recurrent_layout` is what the dependency probe reads too (it probes
along the batch axis found, or says why it cannot); :class:`RecurrentLayout` is GA344's.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> x = Tensor(np.ones((2, 3), np.float32))
    >>> EvidenceSet(AuditRequest(nn.Dense(3, 2), inputs=(x,))).need(RecurrentLayout).layout.uses  # none to judge
    ()
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.dataset import TrainingData
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.trace import TracedPass

if TYPE_CHECKING:
    from graphaudit.capture.dependency.layout import Batch, RecurrentUse

__all__ = ["Layout", "RecurrentLayout", "recurrent_layout"]


@dataclass(frozen=True)
class Layout:
    """The network input's batch, and how each time-major recurrent layer is fed."""

    primary: int  # the index of the input the batch axis is read on
    batch: Batch
    uses: tuple[RecurrentUse, ...]

    @property
    def reason(self) -> str | None:
        """Why the batch axis of some layer cannot be decided (the first such layer), or ``None``."""
        return next((use.reason for use in self.uses if use.reason is not None), None)


def _shape(value: Any) -> tuple[int, ...] | None:
    shape = getattr(value, "shape", None)
    return tuple(int(d) for d in shape) if shape is not None and len(shape) >= 1 else None


def recurrent_layout(request: AuditRequest, have: EvidenceSet) -> Layout | None:
    """The layout of the network's time-major recurrent layers; ``None`` when it has none (or no batch)."""
    from graphaudit.capture.dependency.layout import (
        convolved_input,
        decide_batch,
        recurrent_uses,
        time_major_layers,
    )

    network = have.need(NetworkGraph)
    graph = network.graph
    cells = {graph.nodes[node]["path"]: cell for node, cell in network.structure.cells.items()}
    inputs = request.inputs or ()
    primary = next((i for i, x in enumerate(inputs) if len(_shape(x) or ()) >= 2), None)
    if not time_major_layers(cells) or primary is None:
        return None
    shape = _shape(inputs[primary])
    assert shape is not None
    data = have.get(TrainingData)
    sizes: list[int] = []
    if data is not None:
        sizes = sorted(
            {int(a["batch_size"]) for _, a in data.graph.nodes(data=True) if int(a.get("batch_size", -1)) > 0}
        )
    batch = decide_batch(shape, _shape(request.label), sizes, convolved_input(graph, primary, shape))
    return Layout(primary, batch, tuple(recurrent_uses(graph, cells, batch)))


@dataclass(frozen=True)
class RecurrentLayout(Evidence):
    """The time-major recurrent layers whose input's batch axis could be decided, and how each is fed."""

    title = "how the time-major recurrent layers are fed (which axis is the batch)"
    requirement = Requirement(
        "pass inputs=(x, ...) and label=y (its axis 0 is the batch) or dataset=train_ds",
        "give --input SHAPE and --label SHAPE or --dataset MODULE:FACTORY",
    )
    needs = (NetworkGraph, TracedPass)
    uses = (TrainingData,)

    layout: Layout

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> RecurrentLayout | Missing:
        from graphaudit.capture.dependency.layout import Batch

        layout = recurrent_layout(request, have)
        if layout is None:  # no time-major recurrent layer: nothing is fed wrong, the check ran
            return cls(Layout(0, Batch(None), ()))
        if layout.reason is not None and not any(use.misfed for use in layout.uses):
            return Missing(f"how the recurrent layers are fed could not be decided: {layout.reason}")
        return cls(layout)

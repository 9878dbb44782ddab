"""The loss run on the label the user gave (``audit(..., loss_fn=..., label=y, inputs=...)``).

Made whenever a loss is given apart and a label with it: whether the loss ran on the
network's output and that label, and if not, what MindSpore said. A label the loss refuses
(one-hot rows given to a sparse cross-entropy, 5 labels for a batch of 8, an ``(N,)``
target against an ``(N, 3)`` regression output) means nothing the loss does in training was
seen: :class:`~graphaudit.evidence.loss.LossTrace` is then missing with this reason, and
GA060 reports the label. A label holding class indices the output cannot hold is never
given to the loss (GA052 reports it): it is not a refusal.

Example:
    >>> import numpy as np
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> x, y = Tensor(np.ones((8, 4), np.float32)), Tensor(np.zeros((5,), np.int32))
    >>> request = AuditRequest(nn.Dense(4, 3), inputs=(x,), label=y, loss_fn=nn.CrossEntropyLoss())
    >>> ran = EvidenceSet(request).need(LossOnLabel)
    >>> ran.label_shape, ran.output_shape, ran.refused is not None
    ((5,), (8, 3), True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.network import NetworkGraph
from graphaudit.evidence.trace import TracedPass

__all__ = ["LossOnLabel"]


def _shape_dtype(value: Any) -> tuple[tuple[int, ...], str]:
    shape = getattr(value, "shape", None)
    dtype = getattr(value, "dtype", None)
    return (tuple(int(d) for d in shape) if shape is not None else ()), str(dtype or type(value).__name__)


@dataclass(frozen=True, eq=False)
class LossOnLabel(Evidence):
    """The loss, its output's and label's shapes and dtypes, and why it refused the label (or ``None``)."""

    title = "the loss run on the given label"
    requirement = Requirement(
        "pass loss_fn=... and label=y together with inputs=(x, ...)",
        "give a loss (a factory returning (net, optimizer, loss_fn)), --input and --label",
    )
    needs = (TracedPass,)

    loss_fn: Any
    output_shape: tuple[int, ...]
    output_dtype: str
    label_shape: tuple[int, ...]
    label_dtype: str
    refused: str | None

    @property
    def name(self) -> str:
        return type(self.loss_fn).__name__

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> LossOnLabel | Missing:
        from graphaudit.capture.network.recorder import flatten_tensors

        if request.loss_fn is None or request.label is None or request.loss_inside:
            return Missing()  # a loss the network calls itself runs on the label in the forward pass
        if isinstance(request.label, (tuple, list)):
            return Missing(f"the label is a {type(request.label).__name__}: each part is judged by the loss")
        network = have.need(NetworkGraph)
        outputs = flatten_tensors(network.output)
        if network.loss is None or not outputs:
            return Missing("the network's output holds no tensor to give the loss")
        output_shape, output_dtype = _shape_dtype(outputs[0])
        label_shape, label_dtype = _shape_dtype(request.label)
        return cls(
            request.loss_fn, output_shape, output_dtype, label_shape, label_dtype, network.loss.refused
        )

"""The label given to the audit, next to the traced batch (``audit(..., inputs=(x,), label=y)``).

The design rules on labels (GA051-GA054, GA405, GA409) compare what the loss will be given
with what the network outputs: the label's values (a class index beyond the output's width,
one-hot rows fed to a binary cross-entropy...) and its shape. They judge the label of the
traced batch only; a label given as a tuple (a detector's ``(boxes, classes)``) or as
something that is not an array of numbers is not judged, and this evidence is missing.

Example:
    >>> import numpy as np
    >>> from mindspore import nn, Tensor
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> x, y = Tensor(np.ones((2, 3), np.float32)), Tensor(np.array([0, 1], np.int32))
    >>> label = EvidenceSet(AuditRequest(nn.Dense(3, 2), inputs=(x,), label=y)).need(GivenLabel)
    >>> label.values.tolist(), label.dtype
    ([0, 1], 'int32')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Requirement
from graphaudit.evidence.trace import TracedPass

__all__ = ["GivenLabel"]


@dataclass(frozen=True, eq=False)
class GivenLabel(Evidence):
    """The label of the traced batch as a NumPy array (``values``), with its MindSpore dtype."""

    title = "the label of the traced batch"
    requirement = Requirement(
        "pass label=y (what the loss compares the output with) together with inputs=(x, ...)",
        "give --label SHAPE[:DTYPE] (random values: pass a real label from Python to judge its values)",
    )
    needs = (TracedPass,)

    values: Any  # numpy.ndarray
    dtype: str

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> GivenLabel | Missing:
        import numpy as np

        label = request.label
        if label is None:
            return Missing()
        if isinstance(label, (tuple, list)):
            return Missing(
                f"the label is a {type(label).__name__} of {len(label)} values; the label rules judge "
                "one array of class indices, one-hot rows or targets"
            )
        try:
            values = np.asarray(label.asnumpy() if hasattr(label, "asnumpy") else label)
        except Exception as err:  # a label that is no array: nothing to judge
            return Missing(f"the label could not be read as an array ({type(err).__name__}: {err})")
        if values.dtype.kind not in "biuf" or values.ndim == 0:
            return Missing(
                f"the label is a {values.dtype} array of shape {list(values.shape)}, not a batch of numbers"
            )
        return cls(values, str(values.dtype))

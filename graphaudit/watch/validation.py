"""One evaluation of the validation set: its loss per sample and, for a classifier, its accuracy.

The too-many-epochs watchpoint (GA953) reads both: a classifier's validation cross-entropy
creeps up as it grows confident on the samples it already gets right, at a constant accuracy,
and only an accuracy that falls with it says that the later weights generalise worse.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

import numpy as np

__all__ = ["ACCURACY_KEYS", "Validation", "accuracy_in", "even_batches", "validate"]

ACCURACY_KEYS = ("accuracy", "acc", "top_1_accuracy", "top1_accuracy", "top1")  # Model.eval's usual names


class Validation(NamedTuple):
    """The mean loss per sample, the accuracy (``None`` when the outputs are not class scores) and the sample count."""

    loss: float
    accuracy: float | None
    samples: int


def _correct(output: Any, label: Any) -> int | None:
    """How many rows of *output* (class scores, ``(N, C)`` with C of 2 or more) pick *label*'s class; else ``None``."""
    if not hasattr(output, "asnumpy") or not hasattr(label, "asnumpy"):
        return None
    scores, truth = output.asnumpy(), label.asnumpy()
    if scores.ndim != 2 or scores.shape[1] < 2 or truth.shape[:1] != scores.shape[:1]:
        return None
    if truth.ndim == 2 and truth.shape[1] == scores.shape[1]:
        truth = truth.argmax(1)  # one-hot or soft labels
    elif truth.ndim != 1 or not np.issubdtype(truth.dtype, np.integer):
        return None
    return int((scores.argmax(1) == truth).sum())


def validate(network: Any, loss_fn: Any, dataset: Any) -> Validation:
    """*network*'s mean loss per sample (with *loss_fn*, unless it returns its loss) over *dataset*, in eval mode, and its accuracy.

    Each batch's mean weighs as many samples as it holds: a mean of the batch means would let a
    last batch of one sample weigh as much as a full one (an overconfident mistake in it then
    drives the curve, and GA953 took a healthy run for overfitting).

    Example:
        >>> import numpy as np, mindspore as ms
        >>> from mindspore import nn
        >>> x = np.eye(3, dtype=np.float32)
        >>> data = ms.dataset.NumpySlicesDataset({"x": x, "y": np.array([0, 1, 0], np.int32)}, shuffle=False).batch(2)
        >>> class Identity(nn.Cell):
        ...     def construct(self, x):
        ...         return x
        >>> v = validate(Identity(), nn.CrossEntropyLoss(), data)
        >>> round(v.accuracy, 3), v.samples
        (0.667, 3)
    """
    from graphaudit.capture.network.isolation import training_flags

    total, count, correct = 0.0, 0, 0
    classified = loss_fn is not None
    with training_flags(network, False):
        for batch in dataset.create_tuple_iterator(num_epochs=1):
            *inputs, label = batch
            output = network(*inputs)
            loss = loss_fn(output, label) if loss_fn is not None else output
            samples = int(label.shape[0]) if len(label.shape) else 1
            total += float(np.asarray(loss.asnumpy(), np.float64).mean()) * samples
            count += samples
            hits = _correct(output, label) if classified else None
            classified = hits is not None
            correct += hits or 0
    if not count:
        return Validation(math.nan, None, 0)
    return Validation(total / count, correct / count if classified else None, count)


def _batch_node(dataset: Any) -> Any:
    node = dataset
    while node is not None and type(node).__name__ != "BatchDataset":
        children = getattr(node, "children", None) or []
        node = children[0] if len(children) == 1 else None
    return node


def even_batches(dataset: Any) -> bool:
    """Whether every batch of *dataset* holds as many samples (then a mean of batch means is the mean).

    Known when the pipeline's last ``batch()`` drops its remainder or its input divides evenly;
    anything else (no ``batch()`` found, a size that cannot be read) is taken as uneven.
    """
    node = _batch_node(dataset)
    if node is None:
        return False
    try:
        size = node.get_batch_size()
        rows = node.children[0].get_dataset_size()
    except Exception:  # a per-batch size function, a source without a size
        return False
    return bool(getattr(node, "drop_remainder", False)) or (isinstance(size, int) and rows % size == 0)


def accuracy_in(results: dict[str, Any], dataset: Any) -> tuple[float, int] | None:
    """The accuracy ``Model.eval`` reported among *results* and the samples it counted, when both can be read.

    Example:
        >>> import numpy as np, mindspore as ms
        >>> data = ms.dataset.NumpySlicesDataset({"x": np.zeros((10, 2), np.float32)}, shuffle=False).batch(5)
        >>> accuracy_in({"loss": 0.3, "acc": 0.9}, data), accuracy_in({"loss": 0.3}, data)
        ((0.9, 10), None)
    """
    key = next((k for k in ACCURACY_KEYS if k in results), None)
    node = _batch_node(dataset)
    if key is None or node is None:
        return None
    try:
        rows = int(node.children[0].get_dataset_size())
        value = float(results[key])
    except Exception:  # a source without a size, a metric that is not a number
        return None
    return (value, rows) if math.isfinite(value) and 0.0 <= value <= 1.0 and rows > 0 else None

"""The loss of a sane start: what a uniform guess scores under the run's loss (GA965's yardstick).

A classifier whose weights are initialised as its layers expect predicts close to uniformly
at first, so its first loss is close to a uniform guess's: ``ln C`` for a softmax
cross-entropy over ``C`` classes, ``ln 2`` per output for a binary one. Checking it is the
first step of the practitioners' recipes (Karpathy 2019, "A Recipe for Training Neural
Networks": "verify loss @ init"; CS231n, "Neural Networks Part 3": "look for correct loss at
chance performance"). The number of classes is the width of the network's output along the
loss's class axis: read from one forward pass of the first step's batch, in PyNative, inside
graphaudit's isolation (:func:`graphaudit.watch.locate.isolated`), so nothing of the run changes.

Only MindSpore's own losses are known, by their exact class: a subclass may add terms of its
own (a regulariser), and then a uniform guess no longer scores ``ln C``.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> net = nn.Dense(4, 10)
    >>> chance = chance_of(nn.CrossEntropyLoss(), net, (Tensor(np.ones((2, 4), np.float32)),))
    >>> round(chance.loss, 4), chance.what
    (2.3026, 'a softmax cross-entropy over 10 classes')
    >>> chance_of(nn.MSELoss(), net, ()).split(":")[0]
    'the loss is nn.MSELoss'
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, Final

from mindspore import Tensor, nn

from graphaudit.evidence.run_record import Chance
from graphaudit.watch.locate import isolated

__all__ = ["Chance", "chance_of", "loss_cell_of"]

# MindSpore's cross-entropies, by exact class name: the axis of the classes, or None for a
# binary loss (each output its own two-class guess).
_CROSS_ENTROPIES: Final[dict[str, int | None]] = {
    "CrossEntropyLoss": 1,
    "NLLLoss": 1,  # of log-probabilities: a uniform guess is log(1/C) too
    "SoftmaxCrossEntropyWithLogits": -1,
    "BCEWithLogitsLoss": None,
    "BCELoss": None,
}
# Reductions under which the run's loss is a mean per sample (``loss_of`` means a "none" vector).
_MEANS: Final = {"mean", "none"}


def loss_cell_of(train_network: Any, loss_fn: Any) -> Any:
    """The loss cell of a ``Model``: its ``loss_fn``, else the ``_loss_fn`` of a ``WithLossCell`` it trains."""
    if loss_fn is not None:
        return loss_fn
    inner = getattr(train_network, "network", None)
    return getattr(inner, "_loss_fn", None)


def _known(loss_fn: Any) -> str | None:
    name = type(loss_fn).__name__
    if name in _CROSS_ENTROPIES and (type(loss_fn).__module__ or "").startswith("mindspore."):
        return name
    return None


def chance_of(loss_fn: Any, network: nn.Cell, inputs: Sequence[Any]) -> Chance | str:
    """A uniform guess's loss under *loss_fn* for *network*'s output on *inputs*, or why it is not known."""
    name = _known(loss_fn)
    if name is None:
        known = ", ".join(f"nn.{n}" for n in _CROSS_ENTROPIES)
        said = f"nn.{type(loss_fn).__name__}" if loss_fn is not None else "not known to the watch"
        return f"the loss is {said}: a uniform guess scores a known loss only under a cross-entropy ({known})"
    reduction = getattr(loss_fn, "reduction", "mean")
    if reduction not in _MEANS:
        return f"nn.{name} sums its losses (reduction={reduction!r}): the loss grows with the batch"
    axis = _CROSS_ENTROPIES[name]
    if axis is None:
        return Chance(math.log(2), f"a binary cross-entropy (nn.{name}), each output a two-class guess")
    try:
        with isolated(network):
            output = network(*inputs)
    except Exception as err:  # the watch never stops a run over its own yardstick
        return f"the network could not be run again on the first batch to read its classes ({type(err).__name__})"
    first = output[0] if isinstance(output, (tuple, list)) and output else output
    if not isinstance(first, Tensor) or len(first.shape) < 2:
        return "the network's output has no class axis (a tensor of 2 dimensions or more)"
    classes = int(first.shape[axis])
    if classes < 2:
        return f"the network's output has {classes} class along the loss's class axis"
    return Chance(math.log(classes), f"a softmax cross-entropy over {classes} classes")

"""What the network's output is, and what the loss expects of it (shared by the GA4xx checks).

Two questions, answered from the traced graphs:

- :func:`~graphaudit.checks._shared.outputs.output_activation`: which normalisation ends the
  backbone (see :mod:`~graphaudit.checks._shared.outputs`);
- :func:`loss_expectation`: what does the loss want as its first argument?
  ``"logits-sigmoid"`` (it applies its own sigmoid: ``BCEWithLogitsLoss``),
  ``"probabilities"`` (``BCELoss``), ``"logits-softmax"`` (it applies its own softmax:
  ``CrossEntropyLoss``, ``SoftmaxCrossEntropyWithLogits``), ``"log-probabilities"``
  (``NLLLoss``) or ``None``. Built-in loss classes of ``mindspore.nn`` / ``mindspore.mint.nn``
  are known by class; any other loss cell by the operations that consume its first input
  in the loss graph (:class:`~graphaudit.evidence.loss.LossTrace`,
  :mod:`~graphaudit.checks._shared.lossreads`), so a custom cell that calls
  ``ops.binary_cross_entropy_with_logits``, or applies ``ops.sigmoid`` and then
  ``ops.binary_cross_entropy``, expects logits.

An output put together from parts (a detection head's ``ops.concat`` of a box branch and
a class branch) is also paired part by part: which node made each element
(:func:`~graphaudit.checks._shared.outputs.origins`) is carried through the loss graph's
index-moving operations (:mod:`~graphaudit.checks._shared.regions`) to the loss operations
that read it, so a sigmoid on the class branch of a head whose loss slices the class part
out for ``BCEWithLogitsLoss`` is paired with that loss (``Pairing.part``).

Every GA4xx finding names as its subject the class name of the loss cell
(``type(loss_fn).__name__``, e.g. ``BCEWithLogitsLoss`` or a custom ``MaskedBCE``): the
loss is the one object each of these findings is about, whether it came as ``loss_fn=``,
inside a ``WithLossCell`` / ``TrainOneStepCell`` or a ``Model``. The message names the
activation cell or operation, and the finding's nodes are the activation's node and
``output:0``.

Example:
    >>> import graphaudit, numpy as np
    >>> from mindspore import nn, Tensor
    >>> net = nn.SequentialCell([nn.Dense(4, 1, activation="sigmoid"), nn.Flatten()])
    >>> g = graphaudit.to_networkx(net, inputs=Tensor(np.ones((2, 4), np.float32)))
    >>> output_activation(g)
    ('sigmoid', 'call:0.activation#1')
    >>> loss_expectation(nn.BCEWithLogitsLoss(), None)
    ('logits-sigmoid', 'nn.BCEWithLogitsLoss applies a sigmoid to its input itself')
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import networkx as nx
import numpy as np

from graphaudit.checks._shared.lossreads import LOSS_CLASSES, loss_from_graph, parts_reaching
from graphaudit.checks._shared.outputs import NORMALISATIONS, describe_node, origins, output_activation
from graphaudit.findings import Cause
from graphaudit.text import listing

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = [
    "EXPECTATIONS",
    "Flagged",
    "FlaggedHeads",
    "Pairing",
    "describe_node",
    "flagged",
    "loss_expectation",
    "output_activation",
    "pairings",
]

EXPECTATIONS: Final = ("logits-sigmoid", "probabilities", "logits-softmax", "log-probabilities")


def _builtin_loss(loss_fn: Any) -> tuple[str, str] | None:
    for cls in type(loss_fn).__mro__:
        module = getattr(cls, "__module__", "") or ""
        if cls.__name__ in LOSS_CLASSES and module.startswith("mindspore."):
            prefix = "mint.nn" if module.startswith("mindspore.mint") else "nn"
            return LOSS_CLASSES[cls.__name__], f"{prefix}.{cls.__name__}"
    return None


_OWN_ACTIVATION = {
    "logits-sigmoid": "applies a sigmoid to its input itself",
    "probabilities": "expects probabilities in [0, 1] as its input",
    "logits-softmax": "applies its own log-softmax to its input",
    "log-probabilities": "expects log-probabilities (the output of a LogSoftmax) as its input",
}


def loss_expectation(
    loss_fn: Any, loss_graph: nx.MultiDiGraph | None, start: str = "input:0"
) -> tuple[str | None, str]:
    """``(expects, evidence)``: what *loss_fn* wants as its first argument, and why we think so.

    *expects* is one of :data:`EXPECTATIONS`, or ``None`` when the loss is unknown or not a
    classification loss. Built-in MindSpore losses are known by class; other cells by the
    operations of *loss_graph* (``loss_fn(logits, label)`` traced with the loss expanded)
    that consume ``input:0``, through shape-only operations.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, ops, Tensor
        >>> class MaskedBCE(nn.Cell):
        ...     def construct(self, logits, labels):
        ...         return ops.binary_cross_entropy_with_logits(
        ...             logits.reshape(-1), labels.reshape(-1), ops.ones(4), ops.ones(4))
        >>> loss = MaskedBCE()
        >>> logits, labels = Tensor(np.zeros((4, 1), np.float32)), Tensor(np.ones((4, 1), np.float32))
        >>> loss_graph = graphaudit.to_networkx(loss, inputs=(logits, labels))
        >>> loss_expectation(loss, loss_graph)  # doctest: +NORMALIZE_WHITESPACE
        ('logits-sigmoid', 'MaskedBCE applies a sigmoid to its input itself: it passes its input
         through ops.binary_cross_entropy_with_logits')
        >>> loss_expectation(nn.MSELoss(), None)
        (None, 'nn.MSELoss is not a classification loss graphaudit knows')
    """
    if loss_fn is None:
        return None, "no loss"
    builtin = _builtin_loss(loss_fn)
    if builtin is not None:
        expects, name = builtin
        return expects, f"{name} {_OWN_ACTIVATION[expects]}"
    builtin_module = (type(loss_fn).__module__ or "").startswith("mindspore.")
    name = f"nn.{type(loss_fn).__name__}" if builtin_module else type(loss_fn).__name__
    found = loss_from_graph(loss_graph, start) if loss_graph is not None else None
    if found is not None:
        expects, chain = found
        return expects, f"{name} {_OWN_ACTIVATION[expects]}: it passes its input through {chain}"
    if loss_graph is None and not builtin_module:
        return None, f"{name} could not be traced"
    return None, f"{name} is not a classification loss graphaudit knows"


@dataclass(frozen=True)
class Pairing:
    """The network's output activation and its loss's expectation, as the GA4xx checks see them."""

    activation: str
    activation_node: str | None
    expects: str | None
    evidence: str
    loss_name: str
    source: str = "output:0"  # where the loss's input comes from: the output, or a node inside
    part: bool = False  # the activation made only the part of the output that this loss operation reads

    @property
    def nodes(self) -> tuple[str, ...]:
        """The graph nodes a finding points at: the activation, and the output the loss is given."""
        return tuple(dict.fromkeys(n for n in (self.activation_node, self.source) if n is not None))


def _pairings(ctx: AuditContext) -> list[Pairing]:
    from graphaudit.evidence.loss import LossTrace

    loss = ctx.need(LossTrace)
    found = []
    for index, source in enumerate(loss.logits):
        if source not in ctx.graph:
            continue
        activation, node = output_activation(ctx.graph, source)
        expects, evidence = loss_expectation(loss.loss_fn, loss.graph, f"input:{index}")
        whole = Pairing(activation, node, expects, evidence, loss.name, source)
        if not index or expects is not None:  # else a further tensor that no loss operation reads whole
            found.append(whole)
        found.extend(
            p
            for p in _part_pairings(ctx.graph, loss, index, whole)
            if (p.activation_node, p.expects) != (whole.activation_node, whole.expects)
        )
    return found


def _part_pairings(graph: nx.MultiDiGraph, loss: Any, index: int, whole: Pairing) -> list[Pairing]:
    """The pairings of the normalised parts of an output with the loss operations that read them.

    A detection head returns its box and class branches concatenated; its loss slices the
    class part out (after reshapes, a concat of the levels, a transpose) and gives it to a
    ``BCEWithLogitsLoss``. Only an output with a normalised part (a sigmoid, a softmax)
    that is not the whole of it, or whose loss operation the plain walk did not find, has any.
    """
    if whole.expects is not None and whole.activation in NORMALISATIONS:
        return []  # every part is made by that activation: the whole output's pairing says it
    made = origins(graph, whole.source) if loss.graph is not None else None
    if made is None:
        return []
    codes, parts = made
    present = {int(c) for c in np.unique(codes) if c >= 0}
    if not any(parts[c][0] in NORMALISATIONS for c in present) or (len(present) == 1 and whole.expects):
        return []
    module = type(loss.loss_fn).__module__ or ""
    name = f"nn.{loss.name}" if module.startswith("mindspore.") else loss.name
    found = []
    for reached, expects, chain in parts_reaching(loss.graph, f"input:{index}", codes):
        for code in sorted(reached):
            activation, node = parts[code]
            if activation in NORMALISATIONS:
                evidence = (
                    f"{name} {_OWN_ACTIVATION[expects]}: it passes that part of its input through {chain}"
                )
                found.append(Pairing(activation, node, expects, evidence, loss.name, whole.source, part=True))
    return list(dict.fromkeys(found))


def pairings(ctx: AuditContext) -> list[Pairing]:
    """The output/loss pairings of an audit, computed once and shared by the GA4xx checks.

    One for each tensor the loss takes as its first argument (the network's first output,
    or each head output a detection loss is given) that a loss operation reads.
    """
    return ctx.shared(_pairings)


def _output(count: int, part: bool) -> str:
    """The sentence's start: ``The network's output is`` or ``The network's 3 outputs ... are each``."""
    if part:
        if count == 1:
            return "Part of the network's output is"
        return f"Part of each of the network's {count} outputs given to the loss is"
    if count == 1:
        return "The network's output is"
    return f"The network's {count} outputs given to the loss are each"


@dataclass(frozen=True)
class Flagged:
    """The pairings a check flags for one reason, told as one finding (one head factory, N heads)."""

    first: Pairing
    wheres: tuple[str, ...]  # where each flagged output is made: ``fc (Dense)``, each once
    nodes: tuple[str, ...]
    count: int
    part: bool = False  # the activations make only the parts of the outputs that the loss reads

    @property
    def where(self) -> str:
        """Where the flagged outputs are made, as text: ``fc (Dense)``, or ``a, b and c``."""
        return listing(self.wheres)

    @property
    def output(self) -> str:
        """The sentence's start: ``The network's output is`` or ``The network's 3 outputs ... are each``."""
        return _output(self.count, self.part)


@dataclass(frozen=True)
class FlaggedHeads(Cause):
    """The facts every GA4xx cause about the network's output and its loss starts from (a base, not a cause)."""

    loss: str  # the loss cell's class name (the finding's subject)
    evidence: str  # what the loss expects of its input, and how that was read (loss_expectation's words)
    wheres: tuple[str, ...]  # where each flagged output is made (``the Sigmoid cell at 'score.activation'``)
    count: int  # how many of the outputs given to the loss are flagged
    part: bool  # the activations make only the parts of the outputs that the loss reads

    @classmethod
    def facts(cls, heads: Flagged) -> dict[str, Any]:
        """The base's fields, read from *heads*: ``cls(**cls.facts(heads), ...)``."""
        first = heads.first
        return {
            "loss": first.loss_name,
            "evidence": first.evidence,
            "wheres": heads.wheres,
            "count": heads.count,
            "part": heads.part,
        }

    @property
    def where(self) -> str:
        """Where the flagged outputs are made, as text: ``fc (Dense)``, or ``a, b and c``."""
        return listing(self.wheres)

    @property
    def output(self) -> str:
        """The sentence's start: ``The network's output is`` or ``The network's 3 outputs ... are each``."""
        return _output(self.count, self.part)


def flagged(ctx: AuditContext, found: list[Pairing], default: str = "its input") -> list[Flagged]:
    """*found* as one :class:`Flagged` (none when empty): the heads of a detection loss built alike are one cause."""
    if not found:
        return []
    wheres = [describe_node(ctx.graph, p.activation_node) if p.activation_node else default for p in found]
    nodes = tuple(dict.fromkeys(n for p in found for n in p.nodes))
    part = any(p.part for p in found)
    count = len(dict.fromkeys(p.source for p in found)) if part else len(found)
    return [Flagged(found[0], tuple(dict.fromkeys(wheres)), nodes, count, part)]

"""The weights a functional training step differentiates (``audit(..., grad_weights=weights)``).

MindSpore 2.x's functional style computes the gradients itself and hands them to the
optimizer by position::

    grad_fn = mindspore.value_and_grad(forward_fn, None, weights)
    loss, grads = grad_fn(data, label)
    optimizer(grads)

so ``weights`` must be the optimizer's parameters, in the optimizer's order. Passing the
same ``weights`` to the audit lets GA207 compare them.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.Dense(3, 2)
    >>> have = EvidenceSet(AuditRequest(net, options={"grad_weights": net.trainable_params()}))
    >>> [p.name for p in have.need(DifferentiatedWeights).weights]
    ['weight', 'bias']
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from graphaudit.errors import ArgumentTypeError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement

__all__ = ["DifferentiatedWeights"]


def _weights(name: str, weights: Any) -> tuple[Any, ...]:
    """*weights* as a tuple, when it is a list of Parameters (the door's check of ``grad_weights=``)."""
    from mindspore import Parameter, ParameterTuple

    items = list(weights) if isinstance(weights, (list, tuple, ParameterTuple)) else None
    if items is None or not all(isinstance(w, Parameter) for w in items):
        raise ArgumentTypeError(
            f"{name}= takes the list of Parameters given to value_and_grad, got "
            f"{type(weights).__name__}; pass e.g. grad_weights=optimizer.parameters"
        )
    return tuple(items)


@dataclass(frozen=True)
class DifferentiatedWeights(Evidence):
    """The parameters a ``value_and_grad`` / ``grad`` step differentiates, in its order."""

    title = "the weights the training step differentiates"
    requirement = Requirement(
        "pass grad_weights=weights, the list given to mindspore.value_and_grad(fn, None, weights)",
        "audit it from Python with grad_weights=weights (the list given to value_and_grad)",
    )
    options = (
        Option(
            "grad_weights",
            "the weights a functional training step differentiates (mindspore.value_and_grad(fn, None, "
            "weights)), compared with the optimizer's parameters (GA207)",
            parse=_weights,
        ),
    )

    weights: tuple[Any, ...]

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> DifferentiatedWeights | Missing:
        weights = request.option("grad_weights")  # a tuple of Parameters, parsed at the door
        return Missing() if weights is None else cls(weights)

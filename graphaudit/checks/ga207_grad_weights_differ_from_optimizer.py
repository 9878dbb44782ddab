"""GA207 grad-weights-differ-from-optimizer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.gradients import DifferentiatedWeights
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Cause, Finding
from graphaudit.text import is_are, listing, members, pronouns

_OWN = "Differentiate the optimizer's own parameters: value_and_grad(fn, None, optimizer.parameters)."


@dataclass(frozen=True)
class UpdatedButNotDifferentiated(Cause):
    """Parameters the optimizer updates that the training step does not differentiate (grad_weights)."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    holder: str | None  # the cell all of whose parameters they are, when there is one
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"{members(self.names, 'parameter', holder=self.holder, note=self.note)} {they.be} updated by the "
            "optimizer but not among the weights the training step differentiates (grad_weights): "
            f"{they.subject} {'gets' if they.subject == 'it' else 'get'} no gradient of {they.possessive} own."
        )

    def fix(self) -> str:
        return _OWN


@dataclass(frozen=True)
class DifferentiatedButNotUpdated(Cause):
    """Weights the training step differentiates (grad_weights) that the optimizer does not hold."""

    names_subjects = True
    names: tuple[str, ...]  # the weights, by attribute path (else Parameter.name)

    def message(self) -> str:
        return (
            f"{listing(self.names)} {is_are(len(self.names))} differentiated (grad_weights) but not in "
            "the optimizer: their gradients have no parameter to update, and the others are paired by "
            "position with the wrong gradients."
        )

    def fix(self) -> str:
        return _OWN


@dataclass(frozen=True)
class GradientsInAnotherOrder(Cause):
    """The step differentiates the optimizer's parameters in another order: gradients go to the wrong weights."""

    position: int  # the first position where the two lists differ
    differentiated: str  # the weight at that position in grad_weights
    updated: str  # the parameter at that position in the optimizer

    def message(self) -> str:
        return (
            f"the weights the step differentiates are the optimizer's parameters in another order: "
            f"position {self.position} is {self.differentiated} in grad_weights but {self.updated} in the "
            f"optimizer, so optimizer(grads) applies the gradient of {self.differentiated} to {self.updated}."
        )

    def fix(self) -> str:
        return (
            "Differentiate the optimizer's own parameters, in its order: value_and_grad(fn, None, "
            "optimizer.parameters)."
        )


@register(
    "GA207",
    "grad-weights-differ-from-optimizer",
    severity="error",
    needs=(OptimizerView, DifferentiatedWeights),
    causes=(UpdatedButNotDifferentiated, DifferentiatedButNotUpdated, GradientsInAnotherOrder),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The weights a functional step differentiates are not the optimizer's, in its order.

    What it does:
        With ``audit(net, optimizer, grad_weights=weights)`` (the list given to
        ``mindspore.value_and_grad(fn, None, weights)``), compares ``weights`` with
        ``optimizer.parameters``: it reports the trainable parameters the optimizer updates
        that are not differentiated, those differentiated that the optimizer does not hold,
        and, when both hold the same parameters, an order that differs.

    Why is this bad:
        ``optimizer(grads)`` pairs gradients with parameters by position. When the two lists
        differ in length MindSpore raises, but when they hold the same parameters in another
        order (two layers of the same shape, a list rebuilt from a dict), every gradient is
        silently applied to the wrong parameter; and a parameter left out of both never trains.

    Example:
        ```python
        weights = net.head.trainable_params() + net.body.trainable_params()
        grad_fn = ms.value_and_grad(forward_fn, None, weights)
        optimizer = nn.SGD(net.trainable_params(), 0.1)  # body first: another order
        ```

    Use instead:
        ```python
        optimizer = nn.SGD(net.trainable_params(), 0.1)
        grad_fn = ms.value_and_grad(forward_fn, None, optimizer.parameters)
        ```
    """
    weights = ctx.need(DifferentiatedWeights).weights
    updated = [p for p in ctx.optimizer_parameters if p.requires_grad]
    differentiated = {id(w) for w in weights}
    held = {id(p) for p in ctx.optimizer_parameters}
    missing = [node for p in updated if id(p) not in differentiated and (node := ctx.parameter_node(p))]
    for group in one_group(ctx, missing):  # one cause: the step differentiates another list
        cause = UpdatedButNotDifferentiated(group.names, group.holder, group.note)
        yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)
    extra = [w for w in weights if id(w) not in held]
    if extra:
        names = tuple(ctx.subject_of(node) if (node := ctx.parameter_node(w)) else w.name for w in extra)
        yield ctx.finding(
            "error",
            names[0],
            DifferentiatedButNotUpdated(names),
            [n for w in extra if (n := ctx.parameter_node(w))] or [g.cell_node("")],
            subjects=names,
        )
    order = [id(p) for p in ctx.optimizer_parameters]
    if not missing and not extra and [id(w) for w in weights] != order:
        first = next(i for i, (w, p) in enumerate(zip(weights, ctx.optimizer_parameters)) if w is not p)
        node = ctx.parameter_node(ctx.optimizer_parameters[first])
        subject = ctx.subject_of(node) if node else ctx.optimizer_parameters[first].name
        got = weights[first]
        got_node = ctx.parameter_node(got)
        got_name = ctx.subject_of(got_node) if got_node else got.name
        yield ctx.finding(
            "error",
            subject,
            GradientsInAnotherOrder(first, got_name, subject),
            [n for n in (node, got_node) if n],
        )

"""GA201 trainable-not-in-optimizer."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import Group, GroupedCause, group_parameters, one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Finding
from graphaudit.text import pronouns


@dataclass(frozen=True)
class LeftOutOfOptimizer(GroupedCause):
    """Trainable parameters the optimizer does not update (*declared_frozen*: the design freezes them)."""

    names_subjects = True
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # every trainable parameter of the subject cell is left out
    declared_frozen: bool
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    @classmethod
    def of(cls, group: Group, *, declared_frozen: bool) -> LeftOutOfOptimizer:
        return cls(group.subject, group.names, group.cell is not None, declared_frozen, group.note)

    def message(self) -> str:
        they = pronouns(len(self.names))
        group = self.described()
        if self.declared_frozen:
            return (
                f"{group} {they.be} trainable but not in the optimizer; the design declares them "
                "frozen, so leaving them out is the freeze."
            )
        return (
            f"{group} {they.be} trainable (requires_grad=True) but not in the optimizer: the training "
            f"step never updates {they.object}, so {they.subject} {they.keep} {they.possessive} initial value."
        )

    def fix(self) -> str:
        if self.declared_frozen:
            they = pronouns(len(self.names))
            return f"Also set requires_grad = False on {self.subject} so that no gradient is computed for {they.object}."
        return (
            f"Build the optimizer from net.trainable_params() (or add {self.subject} to a parameter group); "
            "if it is meant to stay fixed, set requires_grad=False or declare it in Spec(frozen=[...])."
        )


@register(
    "GA201",
    "trainable-not-in-optimizer",
    severity="error",
    also=("info",),
    needs=(OptimizerView,),
    uses=(DeclaredDesign,),
    confirms="GA202",
    causes=(LeftOutOfOptimizer,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter that the optimizer does not update.

    What it does:
        Lists every parameter with ``requires_grad=True`` that is not among
        ``optimizer.parameters``. It is an error, unless the design declares the parameter
        frozen (``Spec(frozen=[...])``), when it is reported as info.

    Why is this bad:
        ``TrainOneStepCell`` computes gradients only for ``optimizer.parameters``: a parameter
        left out keeps its initial value for the whole training, silently. MindSpore's guide
        also freezes weights *by* leaving them out, which is why a declared freeze is fine.

    Example:
        ```python
        optimizer = nn.Momentum(net.backbone.trainable_params(), 0.01, 0.9)  # head forgotten
        ```

    Use instead:
        ```python
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        ```

        or declare the freeze: ``Spec(frozen=["backbone.*"])``, and prefer also setting
        ``requires_grad=False`` on frozen parameters.
    """
    universe: list[str] = []
    left_out: list[str] = []
    declared: list[str] = []
    for node, param in ctx.parameters():
        if not param.requires_grad:
            continue
        universe.append(node)
        if not ctx.in_optimizer(param):
            (declared if ctx.spec.is_frozen(param.name) else left_out).append(node)
    for group in group_parameters(ctx, declared, universe):
        cause = LeftOutOfOptimizer.of(group, declared_frozen=True)
        yield ctx.finding("info", group.subject, cause, group.graph_nodes, subjects=group.names)
    groups = group_parameters(ctx, left_out, universe)
    if len(groups) > 1:  # one cause (the optimizer was built from too few), whatever cells it spans
        groups = one_group(ctx, left_out)
    for group in groups:
        cause = LeftOutOfOptimizer.of(group, declared_frozen=False)
        yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)

"""GA206 declared-trainable-but-frozen."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Cause, Finding
from graphaudit.text import is_are, members, pronouns

# Running statistics that normalization layers keep as requires_grad=False Parameters: they
# are never meant to train, so a glob such as ``backbone.*`` in Spec.trainable does not cover them.
STATISTICS = frozenset(
    {"moving_mean", "moving_variance", "running_mean", "running_var", "num_batches_tracked"}
)


def is_statistic(ctx: AuditContext, node: str) -> bool:
    """Whether every owner holds this parameter under a running-statistics attribute name."""
    names = [d["name"] for _, _, d in ctx.graph.in_edges(node, data=True) if d["kind"] == g.OWNS]
    return bool(names) and all(name in STATISTICS for name in names)


@dataclass(frozen=True)
class DeclaredTrainableButFrozen(Cause):
    """Parameters the design declares trainable that have requires_grad=False (and may be left out of the optimizer)."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    holder: str | None  # the cell all of whose parameters they are, when there is one
    not_in_optimizer: bool  # also left out of the optimizer
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        wrong = ("has " if one else "have ") + "requires_grad=False"
        if self.not_in_optimizer:
            wrong += f" and {is_are(len(self.names))} not in the optimizer"
        return (
            f"{members(self.names, 'parameter', holder=self.holder, note=self.note)} {is_are(len(self.names))} "
            f"declared trainable but {wrong}: {they.subject} will not train."
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        setting = f"{self.names[0]}.requires_grad" if len(self.names) == 1 else "requires_grad of each"
        return (
            f"Set {setting} = True and build the optimizer from net.trainable_params() (after freezing), "
            f"or remove {they.object} from Spec(trainable=...) if {they.subject} {is_are(len(self.names))} "
            "meant to stay fixed."
        )


@register(
    "GA206",
    "declared-trainable-but-frozen",
    severity="error",
    needs=(DeclaredDesign,),
    uses=(OptimizerView,),
    causes=(DeclaredTrainableButFrozen,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the design declares trainable that will not train.

    What it does:
        Reports each parameter matching ``Spec.trainable`` that has ``requires_grad=False``
        (and, when an optimizer is given, whether it is in it; a trainable parameter missing
        from the optimizer is GA201's error, reported once). Normalization statistics
        (``moving_mean``, ``moving_variance``) are left out unless named exactly.

    Why is this bad:
        Freezing code often selects parameters by name (``if not p.name.startswith("head")``);
        after a rename it freezes the layer that was meant to learn. The network then trains
        only part of what its author intended, or nothing at all, and the flat loss is blamed
        on the learning rate.

    Example:
        ```python
        spec = Spec(trainable=["classifier.*"])
        for p in net.get_parameters():
            if not p.name.startswith("head"):  # the head is called "classifier" now
                p.requires_grad = False
        ```

    Use instead:
        ```python
        for p in net.backbone.get_parameters():
            p.requires_grad = False
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        ```
    """
    causes: dict[bool, list[str]] = {}  # also left out of the optimizer -> the parameters
    for node, param in ctx.parameters():
        if not ctx.spec.is_trainable(param.name):
            continue
        if is_statistic(ctx, node) and not param.requires_grad and param.name not in ctx.spec.trainable:
            continue
        left_out = ctx.optimizer is not None and not ctx.in_optimizer(param)
        if param.requires_grad:
            continue  # requires_grad=True: not frozen (one left out of the optimizer is left out, not frozen)
        causes.setdefault(left_out, []).append(node)
    # One cause, one finding: a freeze that went too far, however many parameters it covers.
    for left_out, found in causes.items():
        for group in one_group(ctx, found):
            cause = DeclaredTrainableButFrozen(group.names, group.holder, left_out, group.note)
            yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)

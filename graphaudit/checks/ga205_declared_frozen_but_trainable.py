"""GA205 declared-frozen-but-trainable."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Cause, Finding
from graphaudit.text import is_are, members, pronouns


@dataclass(frozen=True)
class DeclaredFrozenButTrainable(Cause):
    """Parameters the design declares frozen that have requires_grad=True and are in the optimizer."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    holder: str | None  # the cell all of whose parameters they are, when there is one
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    def message(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        return (
            f"{members(self.names, 'parameter', holder=self.holder, note=self.note)} {is_are(len(self.names))} "
            f"declared frozen but {'has' if one else 'have'} requires_grad=True and {they.be} in the optimizer: "
            f"{they.subject} will train."
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        setting = f"{self.names[0]}.requires_grad" if len(self.names) == 1 else "requires_grad of each"
        return (
            f"Set {setting} = False and build the optimizer from net.trainable_params(), "
            f"or remove {they.object} from Spec(frozen=...) if {they.subject} {is_are(len(self.names))} meant to train."
        )


@register(
    "GA205",
    "declared-frozen-but-trainable",
    severity="error",
    needs=(
        DeclaredDesign,
        OptimizerView,
    ),
    causes=(DeclaredFrozenButTrainable,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the design declares frozen that will train.

    What it does:
        Reports each parameter matching ``Spec.frozen`` that has ``requires_grad=True`` and is
        in the optimizer. (Trainable but left out of the optimizer is a freeze by omission,
        reported as info by GA201.)

    Why is this bad:
        Fine-tuning recipes freeze a pretrained backbone on purpose; when the freeze is
        forgotten, or done on the wrong prefix, the backbone is updated with a learning rate
        meant for a fresh head and its pretrained features are destroyed. Training still
        runs and the loss still falls, so nothing points at the mistake.

    Example:
        ```python
        spec = Spec(frozen=["backbone.*"])
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)  # the freeze was never done
        ```

    Use instead:
        ```python
        for p in net.backbone.get_parameters():
            p.requires_grad = False
        optimizer = nn.Momentum(net.trainable_params(), 0.01, 0.9)
        ```
    """
    if ctx.optimizer is None or not ctx.spec.frozen:
        return
    found = [
        node
        for node, param in ctx.parameters()
        if ctx.spec.is_frozen(param.name) and param.requires_grad and ctx.in_optimizer(param)
    ]
    # One cause, one finding: the freeze that was never done, however many parameters it covers.
    for group in one_group(ctx, found):
        cause = DeclaredFrozenButTrainable(group.names, group.holder, group.note)
        yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)

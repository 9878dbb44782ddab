"""GA202 optimizer-param-not-in-network."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.sharing import network_node
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing, pronouns


@dataclass(frozen=True)
class OptimizerUpdatesNamesakes(Cause):
    """Parameters the optimizer updates that are other objects than the network's own of the same names."""

    names_subjects = True
    names: tuple[str, ...]  # their Parameter.name

    def message(self) -> str:
        one = len(self.names) == 1
        they = pronouns(len(self.names))
        return (
            f"the optimizer updates {_describe(self.names)} whose name{'' if one else 's'} the network's "
            f"own {'parameter has' if one else 'parameters have'}, but {they.subject} {they.be} "
            f"{'another Parameter object' if one else 'other Parameter objects'}: the network's own "
            f"{'weight is' if one else 'weights are'} never updated. Either the optimizer was built from "
            "another instance of the network (a model re-created after the optimizer), or these cells "
            "were replaced after the optimizer was built (a new head)."
        )

    def fix(self) -> str:
        return (
            "Build the optimizer from the network you train, after its last change: "
            "nn.Optimizer(net.trainable_params(), ...) once the network (and any replaced head) is final."
        )


@dataclass(frozen=True)
class OptimizerUpdatesStrangers(Cause):
    """Parameters the optimizer updates that the network does not hold at all, under any name."""

    names_subjects = True
    names: tuple[str, ...]  # their Parameter.name

    def message(self) -> str:
        return (
            f"the optimizer updates {_describe(self.names)} that the network does not hold at all: "
            f"{pronouns(len(self.names)).possessive} updates have no effect on the network."
        )

    def fix(self) -> str:
        return (
            "Build the optimizer from the parameters of the network you train "
            "(nn.Optimizer(net.trainable_params(), ...)), after the network is created."
        )


@register(
    "GA202",
    "optimizer-param-not-in-network",
    severity="error",
    needs=(OptimizerView,),
    causes=(OptimizerUpdatesNamesakes, OptimizerUpdatesStrangers),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An optimizer parameter that the audited network does not hold.

    What it does:
        Reports each Parameter in ``optimizer.parameters`` that is not a parameter object of
        the network, noting when the network has a different parameter of the same name.

    Why is this bad:
        The optimizer updates the Parameter objects it was built with. Built from another
        instance of the network (a model re-created after the optimizer, a copy made for
        evaluation), it updates weights that the trained network never reads, while the
        network's own weights stay at their initial values. The loss stays flat, or falls
        only through the parameters that happen to be shared.

    Example:
        ```python
        optimizer = nn.Adam(Net().trainable_params())  # a second, throw-away Net
        net = Net()
        model = ms.train.Model(net, loss_fn, optimizer)
        ```

    Use instead:
        ```python
        net = Net()
        optimizer = nn.Adam(net.trainable_params())
        model = ms.train.Model(net, loss_fn, optimizer)
        ```
    """
    by_name = g.parameter_nodes_by_name(ctx.graph)
    foreign = [p for p in ctx.optimizer_parameters if network_node(ctx, p) is None]
    namesakes = [p for p in foreign if by_name.get(p.name)]
    strangers = [p for p in foreign if not by_name.get(p.name)]
    if namesakes:
        names = tuple(p.name for p in namesakes)
        yield ctx.finding(
            "error",
            _common_prefix(names),
            OptimizerUpdatesNamesakes(names),
            [node for p in namesakes for node in by_name[p.name][:1]],
            subjects=names,
        )
    if strangers:
        names = tuple(p.name for p in strangers)
        yield ctx.finding(
            "error",
            _common_prefix(names),
            OptimizerUpdatesStrangers(names),
            [g.cell_node("")],
            subjects=names,
        )


def _describe(names: tuple[str, ...]) -> str:
    if len(names) == 1:
        return f"a Parameter named {names[0]}"
    return f"{len(names)} Parameters ({listing(names)})"


def _common_prefix(names: tuple[str, ...]) -> str:
    """The cell path all *names* are under (``(root)`` for none), or the one name."""
    if len(names) == 1:
        return names[0]
    common = names[0].split(".")[:-1]
    for name in names[1:]:
        parts = name.split(".")[:-1]
        same = 0
        while same < min(len(common), len(parts)) and common[same] == parts[same]:
            same += 1
        common = common[:same]
    return ".".join(common) or "(root)"

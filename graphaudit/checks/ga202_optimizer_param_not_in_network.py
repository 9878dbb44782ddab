"""GA202 optimizer-param-not-in-network."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.sharing import network_node
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Finding


@register("GA202", "optimizer-param-not-in-network", severity="error", needs=(OptimizerView,))
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
    for param in ctx.optimizer_parameters:
        if network_node(ctx, param) is not None:
            continue
        same_name = by_name.get(param.name, [])
        if same_name:
            message = (
                f"the optimizer updates a Parameter named {param.name} that is not the network's {param.name}: "
                "it was built from another instance of the network? The network's own weight is never updated."
            )
        else:
            message = (
                f"the optimizer updates a Parameter named {param.name} that the network does not hold at all: "
                "its updates have no effect on the network."
            )
        yield ctx.finding(
            "error",
            param.name,
            message,
            "Build the optimizer from the parameters of the network you train "
            "(nn.Optimizer(net.trainable_params(), ...)), after the network is created.",
            same_name[:1] or [g.cell_node("")],
        )

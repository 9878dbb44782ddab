"""GA301 cell-never-called."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.calls import mode_guard, never_called_cells
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Finding


@register("GA301", "cell-never-called", severity="warning", also=("info",), needs=(TracedPass,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A cell with parameters that the forward pass never uses.

    What it does:
        Reports every cell of the network tree that holds parameters (itself or below) but
        that the traced forward pass never touched: neither the cell nor any cell inside it
        was called, and none of their parameters was read. Only the outermost such cell is
        reported. A cell driven through another method than ``construct`` still has its
        sub-cells called, so it is not reported. A cell that its parent calls only under
        ``if self.training:`` (or ``if not self.training:``) while the pass ran in the other
        mode — an auxiliary head, an inference-time decoder — is reported as info, saying so.

    Why is this bad:
        A layer defined in ``__init__`` and forgotten in ``construct`` (or a branch behind a
        flag that is never set) is counted in ``net.trainable_params()``, handed to the
        optimizer and saved in checkpoints, so everything looks normal, but it never
        contributes to the output: the network is smaller than its author thinks and the
        weights of that layer stay at their initial values.

    Example:
        ```python
        class Net(nn.Cell):
            def __init__(self):
                super().__init__()
                self.fc1 = nn.Dense(4, 8)
                self.fc2 = nn.Dense(8, 8)   # meant to sit between fc1 and head
                self.head = nn.Dense(8, 2)

            def construct(self, x):
                return self.head(ops.relu(self.fc1(x)))
        ```

    Use instead:
        ```python
            def construct(self, x):
                x = ops.relu(self.fc1(x))
                return self.head(ops.relu(self.fc2(x)))
        ```

        If the cell is used only in training (an auxiliary head), audit the network in
        training mode (``net.set_train(True)``); if it is not needed, delete it.
    """
    for node in never_called_cells(ctx):
        attrs = ctx.graph.nodes[node]
        path = ctx.cell_path(node)
        params = [ctx.structure.parameters[p] for p in _parameters_inside(ctx, node)]
        fate = (
            "yet it is trained and saved"
            if any(p.requires_grad for p in params)
            else "and it holds only frozen parameters (requires_grad=False), which are saved"
        )
        guard = mode_guard(ctx, node)
        if guard is not None:
            wanted, where = guard
            ran = "training" if not wanted else "inference"
            yield ctx.finding(
                "info",
                path,
                f"{path} ({attrs['class_name']}) is called only when self.training is {wanted} (in {where}), "
                f"and the traced forward pass ran in {ran} mode, so it was not exercised; its parameters "
                f"were not checked for wiring.",
                f"Nothing to do if {path} is meant for {'training' if wanted else 'inference'} only; to check it "
                f"too, audit with the network in that mode (net.set_train({wanted}), mode="
                f"{'train' if wanted else 'eval'!r}).",
                [node],
            )
            continue
        mode = "training" if ctx.structure.cells[node].training else "evaluation"
        yield ctx.finding(
            "warning",
            path,
            f"{path} ({attrs['class_name']}) holds parameters but was never called in the traced "
            f"forward pass ({mode} mode), and none of its parameters was read: it does not "
            f"contribute to the output, {fate}.",
            f"Call {path} in construct where it belongs, or delete it; if it is used only in "
            f"{'evaluation' if mode == 'training' else 'training'} mode, audit the network in that mode.",
            [node],
        )


def _parameters_inside(ctx: AuditContext, node: str) -> list[str]:
    found: list[str] = []
    stack, seen = [node], {node}
    while stack:
        for _, target, d in ctx.graph.out_edges(stack.pop(), data=True):
            if d["kind"] == g.OWNS:
                found.append(target)
            elif d["kind"] == g.CONTAINS and target not in seen:
                seen.add(target)
                stack.append(target)
    return list(dict.fromkeys(found))

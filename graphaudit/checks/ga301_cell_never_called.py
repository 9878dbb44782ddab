"""GA301 cell-never-called."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.calls import mode_guard, never_called_cells
from graphaudit.checks._shared.grouping import cell_group, pattern
from graphaudit.checks._shared.selection import selected_at_run_time
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing, pronouns

#: How a construct picks the members it calls (graphaudit.checks._shared.selection), in words.
_SELECTIONS = {
    "random": "a random draw skips it (LayerDrop)",
    "routing": "the data choose it (routing)",
    "data": "the data skip it",
}


def _named(names: tuple[str, ...], classes: tuple[str, ...]) -> str:
    """``fc2 (Dense)``, or ``2 Dense cells (blocks.0.aux and blocks.1.aux)``."""
    kinds = listing(classes, None)
    return f"{names[0]} ({kinds})" if len(names) == 1 else f"{len(names)} {kinds} cells ({listing(names)})"


@dataclass(frozen=True)
class CellsNeverCalled(Cause):
    """Cells holding parameters that the traced forward pass never called (nor read their parameters)."""

    names_subjects = True
    names: tuple[str, ...]  # the cells' paths
    classes: tuple[str, ...]  # their classes, each once
    trained: bool  # some of their parameters have requires_grad=True
    mode: str  # the mode the pass ran in: "training" or "evaluation"

    def message(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        fate = (
            f"yet {they.subject} {they.be} trained and saved"
            if self.trained
            else f"and {they.subject} {'holds' if one else 'hold'} only frozen parameters (requires_grad=False), "
            "which are saved"
        )
        return (
            f"{_named(self.names, self.classes)} {'holds' if one else 'hold'} parameters but "
            f"{'was' if one else 'were'} never called in the traced forward pass ({self.mode} mode), and none of "
            f"{they.possessive} parameters was read: {they.subject} {'does' if one else 'do'} not contribute to "
            f"the output, {fate}."
        )

    def fix(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        return (
            f"Call {listing(self.names)} in construct where {they.subject} {'belongs' if one else 'belong'}, or "
            f"delete {they.object}; if {they.subject} {they.be} used only in "
            f"{'evaluation' if self.mode == 'training' else 'training'} mode, audit the network in that mode."
        )


@dataclass(frozen=True)
class CellsSelectedAtRunTime(Cause):
    """Members of a container that the owner calls only as a random draw or the data choose, left out of the pass."""

    names_subjects = True
    names: tuple[str, ...]  # the cells' paths
    classes: tuple[str, ...]  # their classes, each once
    selection: str  # "random" (LayerDrop), "routing" (the data choose it) or "data" (the data skip it)
    where: str  # the construct that decides: "Decoder.construct"

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"{_named(self.names, self.classes)} {they.be} called only when {_SELECTIONS[self.selection]} (in "
            f"{self.where}), and the traced forward pass did not call {they.object}; {they.possessive} parameters "
            "were not checked for wiring."
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"Nothing to do: {listing(self.names)} {they.be} left out of some passes by design. To check "
            f"{they.object} too, audit with a batch or a seed that calls {they.object}."
        )


@dataclass(frozen=True)
class CellsForOneModeOnly(Cause):
    """Cells called only under ``if self.training`` (or its negation) while the pass ran in the other mode."""

    names_subjects = True
    names: tuple[str, ...]  # the cells' paths
    classes: tuple[str, ...]  # their classes, each once
    training: bool  # the value of self.training they are called with
    where: str  # the construct that guards them: "Net.construct"

    def message(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        ran = "training" if not self.training else "inference"
        return (
            f"{_named(self.names, self.classes)} {they.be} called only when self.training is {self.training} (in "
            f"{self.where}), and the traced forward pass ran in {ran} mode, so {they.subject} "
            f"{'was' if one else 'were'} not exercised; {they.possessive} parameters were not checked for wiring."
        )

    def fix(self) -> str:
        they = pronouns(len(self.names))
        wanted = self.training
        return (
            f"Nothing to do if {listing(self.names)} {they.be} meant for {'training' if wanted else 'inference'} "
            f"only; to check {they.object} too, audit with the network in that mode (net.set_train({wanted}), mode="
            f"{'train' if wanted else 'eval'!r})."
        )


@register(
    "GA301",
    "cell-never-called",
    severity="warning",
    also=("info",),
    needs=(TracedPass,),
    causes=(CellsNeverCalled, CellsSelectedAtRunTime, CellsForOneModeOnly),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A cell with parameters that the forward pass never uses.

    What it does:
        Reports every cell of the network tree that holds parameters (itself or below) but
        that the traced forward pass never touched: neither the cell nor any cell inside it
        was called, and none of their parameters was read. Only the outermost such cell is
        reported, and the cells one ``construct`` forgets (the same attribute of every cell of
        one class, ``blocks.0.aux``, ``blocks.1.aux``..., or the items of one list) are one finding. A cell driven through another method than ``construct`` still has its
        sub-cells called, so it is not reported. A cell that its parent calls only under
        ``if self.training:`` (or ``if not self.training:``) while the pass ran in the other
        mode — an auxiliary head, an inference-time decoder — is reported as info, saying so;
        so is a member of a container that the owner calls only as a random draw or the data
        choose (LayerDrop's ``rand() < self.layerdrop``, a router's experts).

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
    # One construct that forgets self.<name> forgets it in every cell of that class: one cause.
    causes: dict[tuple, list[str]] = {}
    for node in never_called_cells(ctx):
        parent = next(
            (
                (type(ctx.structure.cells[s]), pattern(d["name"]))
                for s, d in g.edges_in(ctx.graph, node, g.CONTAINS)
            ),
            (None, node),
        )
        chosen = selected_at_run_time(ctx, node)
        if chosen is not None:  # the members one loop or router picks from: one cause whatever their names
            parent = (None, ctx.cell_path(node).rpartition(".")[0])
        causes.setdefault((*parent, mode_guard(ctx, node), chosen), []).append(node)
    for (_, _, guard, chosen), nodes in causes.items():
        group = cell_group(ctx, nodes)
        classes = tuple(dict.fromkeys(ctx.graph.nodes[n]["class_name"] for n in nodes))
        if chosen is not None and guard is None:
            how, where = chosen
            cause = CellsSelectedAtRunTime(group.names, classes, how, where)
            yield ctx.finding("info", group.subject, cause, nodes, subjects=group.names)
            continue
        if guard is not None:
            wanted, where = guard
            cause = CellsForOneModeOnly(group.names, classes, wanted, where)
            yield ctx.finding("info", group.subject, cause, nodes, subjects=group.names)
            continue
        params = [ctx.structure.parameters[p] for n in nodes for p in _parameters_inside(ctx, n)]
        mode = "training" if ctx.structure.cells[nodes[0]].training else "evaluation"
        cause = CellsNeverCalled(group.names, classes, any(p.requires_grad for p in params), mode)
        yield ctx.finding("warning", group.subject, cause, nodes, subjects=group.names)


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

"""GA302 parameter-not-reaching-output."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import networkx as nx

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.calls import never_called_cells
from graphaudit.checks._shared.grouping import Group, GroupedCause, group_parameters
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import is_are, listing, pronouns


@dataclass(frozen=True)
class ParameterOutputDropped(GroupedCause):
    """Trainable parameters read in the forward pass, but nothing computed from them reaches an output."""

    names_subjects = True
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # they are every trainable parameter of the subject cell
    readers: tuple[str, ...]  # the paths (or scopes) of what reads them, "(root)" for the network
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    @classmethod
    def of(cls, group: Group, readers: tuple[str, ...]) -> ParameterOutputDropped:
        return cls(group.subject, group.names, group.cell is not None, readers, group.note)

    def message(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        name = self.described("trainable parameter")
        return (
            f"{name} {is_are(len(self.names))} trainable and read in the forward pass (by {listing(self.readers, None)}), "
            f"but nothing computed from {they.object} reaches an output of the network: {they.subject} "
            f"{'gets' if one else 'get'} no gradient and never {'trains' if one else 'train'}."
        )

    def fix(self) -> str:
        return f"Use the result computed from {self.subject} (return it or combine it into the output), or remove it."


@dataclass(frozen=True)
class ParameterNeverRead(GroupedCause):
    """Trainable parameters that nothing reads in the traced forward pass."""

    names_subjects = True
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # they are every trainable parameter of the subject cell
    note: str = ""  # a lone parameter's Parameter.name, when it differs from its path

    @classmethod
    def of(cls, group: Group) -> ParameterNeverRead:
        return cls(group.subject, group.names, group.cell is not None, group.note)

    def message(self) -> str:
        one, they = len(self.names) == 1, pronouns(len(self.names))
        name = self.described("trainable parameter")
        return (
            f"{name} {is_are(len(self.names))} trainable but nothing reads {they.object} in the traced "
            f"forward pass: {they.subject} {'gets' if one else 'get'} no gradient and never "
            f"{'trains' if one else 'train'}."
        )

    def fix(self) -> str:
        return f"Use {self.subject} in construct, or remove it (or set requires_grad=False if it is a fixed buffer)."


def reaching_outputs(graph: nx.MultiDiGraph) -> set[str]:
    """Every node from which a ``flows`` path leads to an output node (outputs included)."""
    reached = {node for node, _ in g.nodes_of_kind(graph, g.OUTPUT)}
    stack = list(reached)
    while stack:
        node = stack.pop()
        for source, _ in g.edges_in(graph, node, g.FLOWS):
            if source not in reached:
                reached.add(source)
                stack.append(source)
    return reached


def _inside_cells(graph: nx.MultiDiGraph, roots: list[str]) -> set[str]:
    cells = set(roots)
    stack = list(roots)
    while stack:
        for child, _ in g.edges_out(graph, stack.pop(), g.CONTAINS):
            if child not in cells:
                cells.add(child)
                stack.append(child)
    return cells


@register(
    "GA302",
    "parameter-not-reaching-output",
    severity="error",
    needs=(TracedPass,),
    causes=(ParameterOutputDropped, ParameterNeverRead),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A trainable parameter that has no effect on the network's output.

    What it does:
        Follows, in the traced forward pass, the data flow from every operation or cell call
        that reads a trainable parameter, and reports the parameter when none of them leads
        to an output of the network, or when nothing reads it at all. Parameters of cells
        that were never called are left to GA301.

    Why is this bad:
        A branch that is computed and then dropped (``aux = self.aux(x)`` with ``aux`` never
        used, a result overwritten by the next line, a parameter created and forgotten) costs
        compute and looks like part of the model, but gets a zero gradient: its weights never
        train and the output is not what the author designed.

    Example:
        ```python
        def construct(self, x):
            x = self.backbone(x)
            aux = self.aux(x)          # computed, then dropped
            return self.head(x)
        ```

    Use instead:
        ```python
        def construct(self, x):
            x = self.backbone(x)
            return self.head(x), self.aux(x)   # or combine it: self.head(x + self.aux(x))
        ```

        If the branch is meant for another mode only, audit in that mode; if it is not
        needed, delete it.
    """
    graph = ctx.graph
    skipped = _inside_cells(graph, never_called_cells(ctx))
    reaching = reaching_outputs(graph)
    universe: list[str] = []
    read: list[str] = []  # read, but nothing computed from them reaches an output
    unread: list[str] = []  # not read at all
    readers_of: dict[str, list[str]] = {}
    for node, attrs in g.nodes_of_kind(graph, g.PARAMETER):
        if not attrs["requires_grad"] or not attrs.get("registered", True):
            continue
        universe.append(node)
        owners = g.owners_of(graph, node)
        if any(owner in skipped for owner in owners):
            continue
        readers = [t for t, _ in g.edges_out(graph, node, g.READS)]
        if any(reader in reaching for reader in readers):
            continue
        readers_of[node] = readers
        (read if readers else unread).append(node)
    # One cause, one finding: a branch computed and dropped leaves every parameter in it
    # without a gradient; they are gathered under the cell that holds them (group_parameters).
    for found, is_read in ((read, True), (unread, False)):
        for group in group_parameters(ctx, found, universe):
            readers = list(dict.fromkeys(r for n in group.nodes for r in readers_of[n]))
            if is_read:
                where = tuple(
                    dict.fromkeys(
                        graph.nodes[r].get("path", graph.nodes[r].get("scope", "")) or "(root)"
                        for r in readers
                    )
                )
                cause: Cause = ParameterOutputDropped.of(group, where)
            else:
                cause = ParameterNeverRead.of(group)
            yield ctx.finding(
                "error", group.subject, cause, [*group.graph_nodes, *readers], subjects=group.names
            )

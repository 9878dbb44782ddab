"""GA502 submodule-mode-differs."""

from __future__ import annotations

import functools
from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import is_mode_dependent
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Finding


@functools.cache
def reads_training(cls: type) -> bool:
    """Whether a class's own ``construct`` looks at ``self.training`` (a custom mode-dependent cell)."""
    construct = vars(cls).get("construct")
    code = getattr(construct, "__code__", None)
    return code is not None and "training" in code.co_names


def _mode_dependent_inside(ctx: AuditContext, node: str, seen: set[str]) -> bool:
    if node in seen:
        return False
    seen.add(node)
    cell = ctx.structure.cells[node]
    if is_mode_dependent(cell) or any(reads_training(cls) for cls in type(cell).__mro__):
        return True
    children = (t for _, t, d in ctx.graph.out_edges(node, data=True) if d["kind"] == g.CONTAINS)
    return any(_mode_dependent_inside(ctx, child, seen) for child in children)


@register("GA502", "submodule-mode-differs", severity="warning")
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Part of the network is in a different train/eval mode from the cell holding it.

    What it does:
        Compares the ``training`` flag of every cell with that of the cell containing it and
        reports the topmost cell of each subtree whose flag differs (its descendants are not
        reported again), when that subtree holds something whose behaviour depends on the
        mode: a BatchNorm, a Dropout/DropPath, or a cell whose ``construct`` reads
        ``self.training``.

    Why is this bad:
        ``set_train`` is recursive, so a mixed network comes from a ``set_train`` called on
        one branch only (``net.backbone.set_train(False)``), or from assigning
        ``net.training = True`` directly (PyTorch style), which changes the root and none of
        its children (checked on MindSpore 2.10). The branch then runs its BatchNorm and
        Dropout in the other mode than the rest of the network. It is right only for a
        deliberately frozen backbone; if that is the intent, freeze its parameters too.

    Example:
        ```python
        net.set_train(True)
        net.backbone.set_train(False)  # left over from a feature-extraction experiment
        ```

    Use instead:
        ```python
        net.set_train(True)
        ```

        or, for a deliberately frozen backbone, also freeze its BatchNorm parameters
        (``requires_grad=False``) so that the intent is visible.
    """

    def children(node: str) -> list[str]:
        return [t for _, t, d in ctx.graph.out_edges(node, data=True) if d["kind"] == g.CONTAINS]

    def flag(node: str) -> bool:
        return bool(ctx.graph.nodes[node]["training"])

    def lone_flip(node: str, parents: list[str]) -> bool:
        """A flag set on this cell alone (``cell.training = x``): unlike its parent and all its children."""
        kids = children(node)
        return (
            bool(kids)
            and all(flag(k) != flag(node) for k in kids)
            and all(flag(p) != flag(node) for p in parents)
        )

    parents_of: dict[str, list[str]] = {}
    for parent, child, _ in g.edges_of_kind(ctx.graph, g.CONTAINS):
        parents_of.setdefault(child, []).append(parent)

    reported: set[str] = set()
    for node, attrs in g.nodes_of_kind(ctx.graph, g.CELL):
        if attrs["path"] != "" or not lone_flip(node, []):
            continue
        if not any(_mode_dependent_inside(ctx, k, set()) for k in children(node)):
            continue
        reported.add(node)
        mode = "training" if flag(node) else "eval"
        other = "eval" if flag(node) else "training"
        yield ctx.finding(
            "warning",
            ctx.cell_path(node),
            f"the network itself has training={flag(node)} but none of its sub-cells does: they are all in "
            f"{other} mode. The flag was assigned directly (net.training = {flag(node)}), which does not "
            "propagate, instead of set by set_train().",
            f"Call net.set_train({flag(node)}) to put the whole network in {mode} mode.",
            [node, *children(node)],
        )

    for parent, child, edge in g.edges_of_kind(ctx.graph, g.CONTAINS):
        parent_attrs = ctx.graph.nodes[parent]
        child_attrs = ctx.graph.nodes[child]
        if child in reported or flag(child) == flag(parent):
            continue
        if lone_flip(parent, parents_of.get(parent, [])):
            continue  # the parent is the odd one: reported as the root, or through its own parent
        if not _mode_dependent_inside(ctx, child, set()):
            continue
        reported.add(child)
        prefix = f"{parent_attrs['path']}." if parent_attrs["path"] else ""
        path = prefix + edge["name"]
        parent_path = ctx.cell_path(parent)
        cell = ctx.structure.cells[child]
        mode = "training" if cell.training else "eval"
        other = "eval" if cell.training else "training"
        alone = lone_flip(child, parents_of.get(child, []))
        scope = "alone (its own sub-cells are not)" if alone else "and everything under it"
        yield ctx.finding(
            "warning",
            path,
            f"{path} ({child_attrs['class_name']}) {scope} is in {mode} mode "
            f"(training={bool(cell.training)}), while {parent_path} ({parent_attrs['class_name']}) is in "
            f"{other} mode: its BatchNorm/Dropout cells do not follow the rest of the network.",
            f"Call set_train(...) on the whole network rather than on {path}; if {path} is meant to stay "
            f"in {mode} mode (a frozen backbone), freeze its parameters too (requires_grad=False).",
            [child, parent],
        )

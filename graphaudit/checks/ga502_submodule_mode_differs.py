"""GA502 submodule-mode-differs."""

from __future__ import annotations

import functools
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import is_mode_dependent, set_train_reached_a_branch
from graphaudit.checks._shared.grouping import holder, pattern
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, is_are, listing


@functools.cache
def reads_training(cls: type) -> bool:
    """Whether a class's own ``construct`` looks at ``self.training`` (a custom mode-dependent cell)."""
    from graphaudit.capture.compilation.jit import python_function

    construct = python_function(vars(cls).get("construct"))
    code = getattr(construct, "__code__", None)
    return code is not None and "training" in code.co_names


@dataclass(frozen=True)
class BranchModeDiffers(Cause):
    """A branch switched to another mode than the cell holding it, while other mode-dependent cells are not."""

    names_subjects = True
    paths: tuple[str, ...]  # the branches switched alike (one set_train() in a loop over blocks)
    classes: tuple[str, ...]  # their classes, each once
    parent: str  # the cell holding the first of them
    training: bool  # their mode
    inside: int  # the mode-dependent cells inside them
    kinds: tuple[str, ...]  # those cells' classes, sorted
    others: int  # the mode-dependent cells elsewhere in the other mode
    example: str  # the first of those

    def message(self) -> str:
        one = len(self.paths) == 1
        state, other = ("training", "eval") if self.training else ("eval", "training")
        classes = listing(self.classes, None)
        named = (
            f"{self.paths[0]} ({classes}) is"
            if one
            else f"{len(self.paths)} {classes} cells ({listing(self.paths)}) are"
        )
        return (
            f"{named} in {state} mode (training={self.training}), and with {'it its' if one else 'them their'} "
            f"{counted(self.inside, 'mode-dependent cell')} ({listing(self.kinds, None)}), while "
            f"{counted(self.others, 'other mode-dependent cell')} of the network {is_are(self.others)} in {other} "
            f"mode (e.g. {self.example}): they do not run in the same mode."
        )

    def fix(self) -> str:
        one = len(self.paths) == 1
        state = "training" if self.training else "eval"
        target = f"{self.paths[0]} or {self.parent}" if one else f"each of {listing(self.paths)}"
        return (
            f"Call set_train(...) on the whole network rather than on {target}; if "
            f"{self.paths[0] + ' is' if one else 'they are'} meant to stay in {state} mode (a frozen backbone), "
            f"freeze {'its' if one else 'their'} parameters too (requires_grad=False)."
        )


@register(
    "GA502",
    "submodule-mode-differs",
    severity="warning",
    confirms="GA501",
    covered_by="cells",
    causes=(BranchModeDiffers,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Part of the network is in a different train/eval mode from the cell holding it.

    What it does:
        Looks at the cells whose behaviour depends on the mode (a BatchNorm, a
        Dropout/DropPath, a cell whose ``construct`` reads ``self.training``). When they do not
        all run in one mode, reports the topmost cell whose ``training`` flag differs from the
        cell holding it and under which every mode-dependent cell follows that flag, while
        others elsewhere in the network do not. Flags of cells that only hold or wrap others
        change nothing and are not judged: a wrapper built after ``model.set_train(True)``
        (``nn.SequentialCell([model, nn.Sigmoid()])``) is fine. A network on which
        ``set_train`` was never called is not judged either: the ``set_train`` that training
        or evaluation starts with sets every cell, whatever modes a few were given when it
        was built (mindcv's RepMLP switches some BatchNorms on in ``__init__``). The blocks
        switched alike (``block.set_train(False)`` in a loop over them) are one finding.
        When GA501 reports cells of the branch (its BatchNorms left in eval mode for a
        training audit), it says the same cause: the finding joins GA501's (its subject listed
        there, GA502 in ``confirmed_by``); it stands on its own for what GA501 does not report
        (a cell whose ``construct`` reads ``self.training``, a frozen BatchNorm).

    Why is this bad:
        ``set_train`` is recursive, so a mixed network comes from a ``set_train`` called on
        one branch only (``net.backbone.set_train(False)``), or from setting one cell's
        ``training`` directly. The branch then runs its BatchNorm and Dropout in the other
        mode than the rest of the network. It is right only for a deliberately frozen
        backbone; if that is the intent, freeze its parameters too. (A whole network in the
        wrong mode for what it is audited for is GA501's.)

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

    if not set_train_reached_a_branch(ctx.structure.cells.values()):
        return  # the set_train() that training or evaluation starts with sets every cell alike
    dependent = _mode_dependent_cells(ctx)
    if len({bool(ctx.structure.cells[n].training) for n in dependent}) < 2:
        return  # every cell whose behaviour depends on the mode agrees: wrappers' flags change nothing
    parents_of: dict[str, list[tuple[str, str]]] = {}
    for parent, child, edge in g.edges_of_kind(ctx.graph, g.CONTAINS):
        parents_of.setdefault(child, []).append((parent, edge["name"]))
    reported: list[str] = []
    causes: dict[tuple[str, bool], list] = {}
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):  # breadth first: outer cells first
        cell = ctx.structure.cells[node]
        mode = bool(cell.training)
        flipped = [
            (p, name) for p, name in parents_of.get(node, []) if bool(ctx.structure.cells[p].training) != mode
        ]
        if not flipped or any(_inside(ctx, node, r) for r in reported):
            continue
        inside = _subtree(ctx, node)
        mine = [n for n in dependent if n in inside]
        others = [n for n in dependent if n not in inside and bool(ctx.structure.cells[n].training) != mode]
        if not mine or not others or any(bool(ctx.structure.cells[n].training) != mode for n in mine):
            continue
        reported.append(node)
        parent, name = flipped[0]
        path = f"{ctx.graph.nodes[parent]['path']}.{name}" if ctx.graph.nodes[parent]["path"] else name
        # set_train() called on each block in a loop is one cause, however many blocks.
        causes.setdefault((pattern(path), mode), []).append((node, parent, path, mine, others))
    for (_, mode), found in causes.items():
        node, parent, path, _, others = found[0]
        mine = [n for *_, cells, _ in found for n in cells]
        paths = tuple(p for _, _, p, _, _ in found)
        cause = BranchModeDiffers(
            paths,
            tuple(dict.fromkeys(type(ctx.structure.cells[n]).__name__ for n, *_ in found)),
            ctx.cell_path(parent),
            mode,
            len(mine),
            tuple(sorted({type(ctx.structure.cells[n]).__name__ for n in mine})),
            len(others),
            ctx.cell_path(others[0]),
        )
        yield ctx.finding(
            "warning",
            path if len(found) == 1 else holder(list(paths)),
            cause,
            [n for n, parent_node, *_ in found for n in (n, parent_node)],
            subjects=paths,
        )


def _mode_dependent_cells(ctx: AuditContext) -> list[str]:
    """The cells whose behaviour depends on the mode: BatchNorm, Dropout, a construct reading self.training."""
    return [
        node
        for node, _ in g.nodes_of_kind(ctx.graph, g.CELL)
        if is_mode_dependent(ctx.structure.cells[node])
        or any(reads_training(cls) for cls in type(ctx.structure.cells[node]).__mro__)
    ]


def _subtree(ctx: AuditContext, node: str) -> set[str]:
    found, stack = {node}, [node]
    while stack:
        for child, _ in g.edges_out(ctx.graph, stack.pop(), g.CONTAINS):
            if child not in found:
                found.add(child)
                stack.append(child)
    return found


def _inside(ctx: AuditContext, node: str, ancestor: str) -> bool:
    return node in _subtree(ctx, ancestor)

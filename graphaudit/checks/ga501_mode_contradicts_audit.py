"""GA501 mode-contradicts-audit."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import (
    is_batchnorm,
    is_mode_dependent,
    mode_problem,
    set_train_reached_a_branch,
    training_flag_set,
)
from graphaudit.checks._shared.grouping import cell_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.evidence.mode import IntendedMode
from graphaudit.findings import Cause, Finding
from graphaudit.text import is_are, listing, pronouns


def _cells(paths: tuple[str, ...], classes: tuple[str, ...]) -> str:
    """``its mode-dependent cell bn (BatchNorm2d)``, ``its 2 mode-dependent cells, a and b (...),``."""
    if len(paths) == 1:
        return f"its mode-dependent cell {paths[0]} ({classes[0]})"
    return f"its {len(paths)} mode-dependent cells, {listing(paths)} ({listing(classes, None)}),"


@dataclass(frozen=True)
class SetTrainNeverCalled(Cause):
    """A network on which set_train() was never called: its mode-dependent cells are in inference mode."""

    classes: tuple[str, ...]  # the classes of those cells, sorted
    paths: tuple[str, ...]  # the cells still at MindSpore's default training=False

    def message(self) -> str:
        return (
            f"set_train() was never called on this network, so {_cells(self.paths, self.classes)} "
            f"{is_are(len(self.paths))} in inference mode (training=False, "
            f"MindSpore's default). Model.train() switches {pronouns(len(self.paths)).object} on; a custom training "
            "loop does not."
        )

    def fix(self) -> str:
        return (
            "If you train with a custom loop (value_and_grad, TrainOneStepCell called by hand), call "
            "net.set_train(True) before it."
        )


@dataclass(frozen=True)
class NetworkInWrongMode(Cause):
    """Every mode-dependent cell of the network is in the other mode than the one it is audited for."""

    mode: str  # the mode audited for: "train" or "eval"
    classes: tuple[str, ...]  # the classes of the cells in the other mode, sorted
    paths: tuple[str, ...]  # those cells
    problem: str  # what the first of them does wrong (cells.mode_problem's words)
    flag_assigned: (
        bool  # the network's own flag says the audited mode: it was assigned, not set by set_train()
    )

    def message(self) -> str:
        want = self.mode == "train"
        state = "eval" if want else "training"
        assigned = (
            f" The network's own flag says training={want}: a flag assigned directly "
            f"(net.training = {want}) does not reach its cells; set_train() does."
            if self.flag_assigned
            else ""
        )
        return (
            f"the network is in {state} mode but is audited for mode={self.mode!r}: "
            f"{_cells(self.paths, self.classes)} {'behaves' if len(self.paths) == 1 else 'behave'} as in {state}: {self.problem}.{assigned}"
        )

    def fix(self) -> str:
        if self.mode == "train":
            return "Call net.set_train(True) before training."
        return "Call net.set_train(False) before evaluating or exporting."


@dataclass(frozen=True)
class CellsInWrongMode(Cause):
    """Cells of one class left in the other mode than the one the network is audited for."""

    names_subjects = True
    subject: str  # the lone cell, or the cell holding them all
    names: tuple[str, ...]  # the cells' paths
    class_name: str
    training: bool  # their training flag
    problem: str  # what they do wrong (cells.mode_problem's words)
    mode: str  # the mode audited for: "train" or "eval"
    built: bool  # BatchNorms built with use_batch_statistics=True, audited for eval

    def message(self) -> str:
        if len(self.names) == 1:
            named = f"{self.subject} ({self.class_name}, training={self.training})"
        else:
            named = f"Each of {len(self.names)} {self.class_name} cells ({listing(self.names)}, training={self.training})"
        return f"{named} {self.problem}, but the network is audited for mode={self.mode!r}."

    def fix(self) -> str:
        one = len(self.names) == 1
        if self.built:
            return (
                f"Build {listing(self.names)} with use_batch_statistics=None (the default), so that "
                f"{'it follows' if one else 'they follow'} set_train()."
            )
        want = self.mode == "train"
        return (
            f"Call net.set_train({want}) on the whole network, not set_train({not want}) on {self.subject} or a "
            f"cell above {'it' if one else 'them'}."
        )


@register(
    "GA501",
    "mode-contradicts-audit",
    severity="error",
    also=("info",),
    needs=(IntendedMode,),
    uses=(DeclaredDesign,),
    causes=(SetTrainNeverCalled, NetworkInWrongMode, CellsInWrongMode),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A BatchNorm or Dropout in the wrong mode for what the network is audited for.

    What it does:
        With ``mode="train"`` (the default when an optimizer is given), reports a BatchNorm
        that would not use batch statistics and a Dropout (or DropPath) that would not drop,
        because their ``training`` flag is False. With ``mode="eval"``, reports a Dropout
        still in training mode and a BatchNorm that would still use batch statistics. When
        the whole network is in the wrong mode it is reported once, on the network itself.
        A network on which ``set_train`` was never called (MindSpore cells start with
        ``training=False``) gets one *info* finding in train mode: ``Model.train()`` calls
        ``set_train(True)`` itself, a custom training loop must; so do the cells still at that
        default in a network of which only a few cells were switched on at construction. A
        BatchNorm whose ``gamma`` and ``beta`` are frozen is taken as a deliberately frozen
        BatchNorm. The cells of one class that contradict the audit alike (the dropouts of
        blocks switched one by one) are one finding.

    Why is this bad:
        MindSpore's BatchNorm and Dropout choose their behaviour from ``self.training``,
        which only ``net.set_train(...)`` sets, recursively. A BatchNorm left in eval mode
        during training normalises with its moving statistics (on MindSpore 2.10 a batch of
        mean 3, std 2 comes out with mean 2.95, std 2.02 instead of 0 and 1) and never
        updates them; a Dropout left in training mode at inference zeroes half of the
        activations at random. Nothing raises; accuracy silently suffers.

    Example:
        ```python
        def train_step(x, y):
            loss, grads = grad_fn(x, y)
            optimizer(grads)

        net.set_train(False)  # after an evaluation pass
        for x, y in dataset:  # ...training resumes in eval mode
            train_step(x, y)
        ```

    Use instead:
        ```python
        net.set_train(True)  # before training, and set_train(False) before evaluating
        for x, y in dataset:
            train_step(x, y)
        ```
    """
    want = ctx.mode == "train"
    root = next((node for node, attrs in g.nodes_of_kind(ctx.graph, g.CELL) if attrs["path"] == ""), None)
    if root is None:
        return
    root_cell = ctx.structure.cells[root]

    wrong: list[tuple[str, Any, str]] = []
    dependents: list[Any] = []
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        cell = ctx.structure.cells[node]
        if not is_mode_dependent(cell):
            continue
        dependents.append(cell)
        problem = mode_problem(ctx, node)
        if problem is not None:
            wrong.append((node, cell, problem))
    if not wrong:
        return

    # One finding on the network, not one per cell, when set_train() never ran on it (a flag
    # assigned directly to it is a mistake, not a default): the cells still at MindSpore's
    # default are switched on with the rest by the set_train(True) training does, even when a
    # few were switched on at construction (mindcv's RepMLP calls set_train() on some BatchNorms).
    never_set = (
        want and not root_cell.training and not set_train_reached_a_branch(ctx.structure.cells.values())
    )
    if never_set:
        collapsed = [item for item in wrong if not item[1].training and not training_flag_set(item[1])]
    else:  # or when every cell whose behaviour depends on the mode is in the other one
        network_wrong = all(bool(cell.training) != want for cell in dependents)
        collapsed = [item for item in wrong if network_wrong and bool(item[1].training) != want]
    if collapsed:
        done = {node for node, _, _ in collapsed}
        wrong = [item for item in wrong if item[0] not in done]
        names = tuple(sorted({type(cell).__name__ for _, cell, _ in collapsed}))
        paths = tuple(ctx.cell_path(node) for node, _, _ in collapsed)
        nodes = [root] + [node for node, _, _ in collapsed]
        if never_set:
            yield ctx.finding("info", ctx.cell_path(root), SetTrainNeverCalled(names, paths), nodes)
        else:
            assigned = bool(root_cell.training) == want
            cause = NetworkInWrongMode(ctx.mode, names, paths, collapsed[0][2], assigned)
            yield ctx.finding("error", ctx.cell_path(root), cause, nodes)

    # The cells one mistake left in the other mode (a sub-network's set_train, one BatchNorm
    # argument in a block) contradict the audit alike: one finding per class and problem.
    causes: dict[tuple[str, bool, str, bool], list[str]] = {}
    for node, cell, problem in wrong:
        built = is_batchnorm(cell) and not want and getattr(cell, "use_batch_statistics", None) is True
        causes.setdefault((type(cell).__name__, bool(cell.training), problem, built), []).append(node)
    for (class_name, training, problem, built), nodes in causes.items():
        group = cell_group(ctx, nodes)
        cause = CellsInWrongMode(group.subject, group.names, class_name, training, problem, ctx.mode, built)
        yield ctx.finding("error", group.subject, cause, nodes, subjects=group.names)

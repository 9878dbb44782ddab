"""GA604 parameter-not-in-checkpoint."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import Group, GroupedCause, group_parameters, one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.checkpoint import CheckpointContents
from graphaudit.findings import Finding
from graphaudit.text import pronouns


@dataclass(frozen=True)
class _NotHeld(GroupedCause):
    """Parameters the checkpoint does not hold (the base of GA604's causes)."""

    names_subjects = True
    source: str  # the checkpoint: its path, or "the parameter dict"
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # they are every parameter of the subject cell
    note: str  # a lone parameter's Parameter.name, when it differs from its path

    @classmethod
    def of(cls, source: str, group: Group, **more: Any) -> Any:
        return cls(source, group.subject, group.names, group.cell is not None, group.note, **more)


@dataclass(frozen=True)
class NotInCheckpoint(_NotHeld):
    """Parameters the checkpoint does not hold: loading leaves them at their initial values."""

    rename: str = ""  # how a prefix maps entries of the checkpoint to them: "add", "strip", or "" (none does)
    prefix: str = ""  # that prefix
    prefixed: int = 0  # how many of them the checkpoint holds under it

    def message(self) -> str:
        words = pronouns(len(self.names))
        rename = ""
        if self.rename == "add":
            rename = (
                f" The checkpoint holds {self.prefixed} of them without the prefix {self.prefix!r}: rename its "
                f"entries ({{{self.prefix!r} + name: value for name, value in ms.load_checkpoint(path).items()}}) "
                "before load_param_into_net."
            )
        elif self.rename:
            rename = f" The checkpoint holds them with the prefix {self.prefix!r}, which only strict_load=False strips."
        return (
            f"The checkpoint ({self.source}) does not hold {self.described()}: load_param_into_net leaves "
            f"{words.object} at {words.possessive} initial value{'s' if len(self.names) > 1 else ''} "
            f"(it only logs a warning).{rename}"
        )

    def fix(self) -> str:
        return (
            "Make the checkpoint's names match the network's Parameter names (rename the dict's keys, or "
            "load into the sub-cell the checkpoint was saved from); if these parameters are new by design "
            "(a replaced head), declare them: new_parameters=['head.*']."
        )


@dataclass(frozen=True)
class DeclaredNewNotInCheckpoint(_NotHeld):
    """Parameters the checkpoint does not hold, declared new: they start from their initialisation, as meant."""

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"The checkpoint ({self.source}) does not hold {self.described()}, declared new: "
            f"{they.subject} {'starts' if they.subject == 'it' else 'start'} from {they.possessive} initialisation, as intended."
        )

    def fix(self) -> str:
        return "Nothing to do."


@register(
    "GA604",
    "parameter-not-in-checkpoint",
    severity="error",
    also=("info",),
    needs=(CheckpointContents,),
    causes=(NotInCheckpoint, DeclaredNewNotInCheckpoint),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter the checkpoint does not cover: it keeps its random initial value.

    What it does:
        Matches the network's parameters with the checkpoint given as ``checkpoint=``
        (a ``.ckpt`` file or the dict ``mindspore.load_checkpoint`` returns) by MindSpore
        2.10's own rules for ``load_param_into_net`` (names, and with ``strict_load=False``
        the prefix it strips from the checkpoint's names), and reports the parameters no
        entry loads, grouped by the cell that holds them. Parameters declared new with
        ``new_parameters=["head.*"]`` (a replaced head) are one info finding.

    Why is this bad:
        ``load_param_into_net`` only logs a warning for what it does not load, and returns
        the list, which scripts rarely read: those parameters train from their random
        initialisation, or, for BatchNorm statistics, keep 0 and 1. The article's §3.3
        (initial weights) lists wrong starting weights among the silent accuracy problems;
        a fine-tuning run from a checkpoint saved under other names starts from scratch.

    Example:
        ```python
        net = Classifier()                      # parameters named backbone.*, head.*
        ms.save_checkpoint(Backbone(), "pretrained.ckpt")   # names without "backbone."
        graphaudit.audit(net, checkpoint="pretrained.ckpt")
        ```

    Use instead:
        ```python
        params = {"backbone." + name: value for name, value in ms.load_checkpoint("pretrained.ckpt").items()}
        graphaudit.audit(net, checkpoint=params, new_parameters=["head.*"])
        ```
    """
    from graphaudit.capture.checkpoint import suggest_prefix

    contents = ctx.need(CheckpointContents)
    plan = contents.plan
    if not plan.not_loaded:
        return
    by_name = g.parameter_nodes_by_name(ctx.graph)
    universe = [n for n, _ in ctx.parameters()]
    missing, declared = [], []
    for name in plan.not_loaded:
        for node in by_name.get(name, []):
            (declared if contents.declared_new(name, ctx.subject_of(node)) else missing).append(node)
    hint = suggest_prefix(plan.not_loaded, plan.unused)
    mapped: set[str] = set()
    if hint is not None:
        how, prefix, entries = hint
        mapped = {prefix + e if how == "add" else e[len(prefix) :] for e in entries}
    for group in group_parameters(ctx, missing, universe):
        names = {ctx.graph.nodes[n]["name"] for n in group.nodes}
        cause = NotInCheckpoint.of(contents.source, group)
        if hint is not None and names & mapped:
            how, prefix, _ = hint
            cause = NotInCheckpoint.of(
                contents.source, group, rename=how, prefix=prefix, prefixed=len(names & mapped)
            )
        yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)
    for group in one_group(ctx, declared):
        cause = DeclaredNewNotInCheckpoint.of(contents.source, group)
        yield ctx.finding("info", group.subject, cause, group.graph_nodes, subjects=group.names)

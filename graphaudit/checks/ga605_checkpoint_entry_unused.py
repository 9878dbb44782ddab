"""GA605 checkpoint-entry-unused."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.checkpoint import CheckpointContents
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

#: What a training checkpoint holds besides the network: optimizer and loss-scale state, counters.
STATE_NAMES = (
    "global_step", "learning_rate", "momentum", "beta1_power", "beta2_power", "scale_sense",
    "current_iterator_step", "last_overflow_iterator_step", "epoch_num", "step_num", "loss_scale",
)  # fmt: skip
STATE_PREFIXES = (
    "moment1.",
    "moment2.",
    "moments.",
    "accum.",
    "adam_m.",
    "adam_v.",
    "mean_grad.",
    "mean_square.",
)


def _optimizer_state(ctx: AuditContext) -> frozenset[str]:
    view = ctx.get(OptimizerView)
    return view.state_names if view is not None else frozenset()


@dataclass(frozen=True)
class EntriesUnderOtherPrefix(Cause):
    """Checkpoint entries that load into no parameter because a prefix differs from the network's names."""

    names_subjects = True
    source: str  # the checkpoint: its path, or "the parameter dict"
    entries: tuple[str, ...]  # the entries that load into no parameter
    how: str  # "add": the network's names carry the prefix, "strip": the checkpoint's do
    prefix: str
    matching: int  # how many entries the prefix maps onto parameters not loaded

    def message(self) -> str:
        if self.how == "add":
            why = f"the network's names carry the prefix {self.prefix!r} that the checkpoint's lack"
        else:
            why = f"the checkpoint's names carry the prefix {self.prefix!r}, which strict_load=True does not strip"
        return (
            f"{len(self.entries)} entries of {self.source} load into no parameter ({listing(self.entries)}); "
            f"{self.matching} of them match parameters that are not loaded: {why}."
        )

    def fix(self) -> str:
        if self.how == "add":
            return (
                f"Rename the entries before loading: {{{self.prefix!r} + name: value for name, value in "
                "ms.load_checkpoint(path).items()}, or load the checkpoint into the sub-cell it was saved from."
            )
        return "Load with strict_load=False (MindSpore then strips the prefix), or rename the entries."


@dataclass(frozen=True)
class EntriesUnused(Cause):
    """Checkpoint entries that load into no parameter of the network, under no prefix either."""

    names_subjects = True
    source: str  # the checkpoint: its path, or "the parameter dict"
    entries: tuple[str, ...]  # the entries that load into no parameter

    def message(self) -> str:
        return (
            f"{len(self.entries)} entries of {self.source} load into no parameter of the network "
            f"({listing(self.entries)}): a checkpoint of a larger model, or of another one."
        )

    def fix(self) -> str:
        return (
            "Nothing to do if the network is a part of the checkpoint's model; otherwise check that the "
            "checkpoint is the one meant."
        )


@register(
    "GA605",
    "checkpoint-entry-unused",
    severity="warning",
    also=("info",),
    needs=(CheckpointContents,),
    uses=(OptimizerView,),
    causes=(EntriesUnderOtherPrefix, EntriesUnused),
    once="one finding per checkpoint: every entry that loads into no parameter is listed in it",
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """Checkpoint entries that no parameter of the network loads; the prefix that would map them.

    What it does:
        Lists the entries of ``checkpoint=`` that ``load_param_into_net`` would not load
        into any parameter (MindSpore 2.10's matching rules), leaving out optimizer and
        loss-scale state (``moments.*``, ``global_step``, ``learning_rate``...). It is a
        warning when a prefix maps them onto parameters the checkpoint does not cover (the
        network's names carry a prefix the checkpoint's lack, e.g. ``backbone.``: MindSpore
        strips a prefix from the checkpoint's names, never adds one; or ``strict_load=True``
        keeps it from stripping one), and info otherwise (entries of a larger model).

    Why is this bad:
        An entry that loads nowhere is a pretrained weight thrown away; when a prefix
        explains it, the matching parameter silently starts from scratch (GA604). The
        returned ``ckpt_not_load`` list says so, but few scripts read it.

    Example:
        ```python
        net = nn.SequentialCell([backbone, head])      # names 0.*, 1.*
        ms.save_checkpoint(backbone, "backbone.ckpt")  # names conv.*, bn.*
        ```

    Use instead:
        ```python
        params = {"0." + name: value for name, value in ms.load_checkpoint("backbone.ckpt").items()}
        ```
    """
    contents = ctx.need(CheckpointContents)
    plan = contents.plan
    state = _optimizer_state(ctx)
    unused = [
        e for e in plan.unused if e not in state and e not in STATE_NAMES and not e.startswith(STATE_PREFIXES)
    ]
    if not unused:
        return
    hint = contents.prefix_hint(unused)
    root = (g.cell_node(""),)
    if hint is not None:
        how, prefix, mapped = hint
        cause = EntriesUnderOtherPrefix(contents.source, tuple(unused), how, prefix, len(mapped))
        yield ctx.finding("warning", "(root)", cause, root, subjects=tuple(unused))
        return
    yield ctx.finding(
        "info", "(root)", EntriesUnused(contents.source, tuple(unused)), root, subjects=tuple(unused)
    )

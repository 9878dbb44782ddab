"""GA605 checkpoint-entry-unused."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import listing
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.checkpoint import CheckpointContents
from graphaudit.evidence.optimizer import OptimizerView
from graphaudit.findings import Finding

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


@register(
    "GA605",
    "checkpoint-entry-unused",
    severity="warning",
    also=("info",),
    needs=(CheckpointContents,),
    uses=(OptimizerView,),
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
        if how == "add":
            fix = (
                f"Rename the entries before loading: {{{prefix!r} + name: value for name, value in "
                "ms.load_checkpoint(path).items()}, or load the checkpoint into the sub-cell it was saved from."
            )
            why = f"the network's names carry the prefix {prefix!r} that the checkpoint's lack"
        else:
            fix = "Load with strict_load=False (MindSpore then strips the prefix), or rename the entries."
            why = f"the checkpoint's names carry the prefix {prefix!r}, which strict_load=True does not strip"
        yield ctx.finding(
            "warning",
            "(root)",
            f"{len(unused)} entries of {contents.source} load into no parameter ({listing(unused)}); "
            f"{len(mapped)} of them match parameters that are not loaded: {why}.",
            fix,
            root,
            subjects=tuple(unused),
        )
        return
    yield ctx.finding(
        "info",
        "(root)",
        f"{len(unused)} entries of {contents.source} load into no parameter of the network ({listing(unused)}): "
        "a checkpoint of a larger model, or of another one.",
        "Nothing to do if the network is a part of the checkpoint's model; otherwise check that the "
        "checkpoint is the one meant.",
        root,
        subjects=tuple(unused),
    )

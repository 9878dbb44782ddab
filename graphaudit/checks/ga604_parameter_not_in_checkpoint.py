"""GA604 parameter-not-in-checkpoint."""

from __future__ import annotations

from collections.abc import Iterator

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import group_parameters, one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.checkpoint import CheckpointContents
from graphaudit.findings import Finding


@register(
    "GA604", "parameter-not-in-checkpoint", severity="error", also=("info",), needs=(CheckpointContents,)
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
        words = group.pronouns()
        rename = ""
        names = {ctx.graph.nodes[n]["name"] for n in group.nodes}
        if hint is not None and names & mapped:
            how, prefix, _ = hint
            rename = (
                f" The checkpoint holds {len(names & mapped)} of them without the prefix {prefix!r}: rename its "
                f"entries ({{{prefix!r} + name: value for name, value in ms.load_checkpoint(path).items()}}) "
                "before load_param_into_net."
                if how == "add"
                else f" The checkpoint holds them with the prefix {prefix!r}, which only strict_load=False strips."
            )
        yield ctx.finding(
            "error",
            group.subject,
            f"The checkpoint ({contents.source}) does not hold {group.describe('parameter')}: load_param_into_net leaves "
            f"{words.object} at {words.possessive} initial value{'s' if len(group.names) > 1 else ''} "
            f"(it only logs a warning).{rename}",
            "Make the checkpoint's names match the network's Parameter names (rename the dict's keys, or "
            "load into the sub-cell the checkpoint was saved from); if these parameters are new by design "
            "(a replaced head), declare them: new_parameters=['head.*'].",
            group.graph_nodes,
            subjects=group.names,
        )
    for group in one_group(ctx, declared):
        yield ctx.finding(
            "info",
            group.subject,
            f"The checkpoint ({contents.source}) does not hold {group.describe('parameter')}, declared new: "
            f"{group.pronouns().subject} start from {group.pronouns().possessive} initialisation, as intended.",
            "Nothing to do.",
            group.graph_nodes,
            subjects=group.names,
        )

"""GA606 checkpoint-shape-mismatch."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import group_parameters, one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.checkpoint import CheckpointContents
from graphaudit.findings import Finding

if TYPE_CHECKING:
    from graphaudit.capture.checkpoint import Mismatch


@register("GA606", "checkpoint-shape-mismatch", severity="error", also=("info",), needs=(CheckpointContents,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A checkpoint entry matched to a parameter of another shape (or an unconvertible dtype).

    What it does:
        For every parameter that ``load_param_into_net`` matches with an entry of
        ``checkpoint=`` (MindSpore 2.10's rules), compares shapes and dtypes: a different
        shape (other than trailing 1s, which MindSpore reshapes) or a dtype it cannot
        convert (float into int, or any difference with ``strict_load=True``) is an error,
        info when the parameter is declared new (``new_parameters=``: a replaced head whose
        old entries must be filtered out).

    Why is this bad:
        ``load_param_into_net`` raises ``RuntimeError`` at the first such parameter, after
        loading the ones before it: the network is left half loaded. The usual causes are a
        checkpoint of another width or number of classes, or of another model that shares
        the names; a fine-tuning script must drop the old head's entries before loading.

    Example:
        ```python
        net = resnet(num_classes=10)
        params = ms.load_checkpoint("imagenet.ckpt")   # classifier.weight is [1000, 512]
        ms.load_param_into_net(net, params)            # RuntimeError, half loaded
        ```

    Use instead:
        ```python
        params = ms.load_checkpoint("imagenet.ckpt", choice_func=lambda name: not name.startswith("classifier."))
        graphaudit.audit(net, checkpoint=params, new_parameters=["classifier.*"])
        ```
    """
    contents = ctx.need(CheckpointContents)
    by_name = g.parameter_nodes_by_name(ctx.graph)
    universe = [n for n, _ in ctx.parameters()]
    found: dict[str, Mismatch] = {}
    wrong, declared = [], []
    for mismatch in contents.plan.mismatched:
        for node in by_name.get(mismatch.parameter, ()):
            found[node] = mismatch
            new = contents.declared_new(mismatch.parameter, ctx.subject_of(node))
            (declared if new else wrong).append(node)
    for group in group_parameters(ctx, wrong, universe):
        first = found[group.nodes[0]]
        more = f" ({len(group.names)} parameters, e.g. {_what(first, contents.strict_load)})"
        yield ctx.finding(
            "error",
            group.subject,
            f"{contents.source} holds {group.describe('parameter')} with another "
            f"{'shape' if first.problem == 'shape' else 'dtype'}"
            + (more if len(group.names) > 1 else f": {_what(first, contents.strict_load)}")
            + ". load_param_into_net raises RuntimeError at the first of them, after loading the parameters "
            "before it (the network is left half loaded).",
            "Use the checkpoint of this architecture (same widths, same number of classes); if these are "
            "replaced on purpose (a new head), drop their entries before loading and declare them: "
            "new_parameters=['head.*'].",
            group.graph_nodes,
            subjects=group.names,
        )
    for group in one_group(ctx, declared):
        yield ctx.finding(
            "info",
            group.subject,
            f"{group.describe('parameter')} {group.pronouns().be} declared new, and {contents.source} has "
            f"entries for {group.pronouns().object} of another shape or dtype "
            f"(e.g. {_what(found[group.nodes[0]], contents.strict_load)}).",
            "Drop those entries before load_param_into_net (ms.load_checkpoint(path, choice_func=lambda "
            "name: not name.startswith('head.'))), or it raises RuntimeError.",
            group.graph_nodes,
            subjects=group.names,
        )


def _what(mismatch: Mismatch, strict: bool) -> str:
    (shape, dtype), (got_shape, got_dtype) = mismatch.expected, mismatch.found
    entry = "" if mismatch.entry == mismatch.parameter else f" (entry {mismatch.entry!r})"
    if mismatch.problem == "shape":
        return (
            f"{mismatch.parameter}{entry}: {list(got_shape)} in the checkpoint, {list(shape)} in the network"
        )
    note = " (strict_load=True converts nothing)" if strict else ""
    return f"{mismatch.parameter}{entry}: {got_dtype} in the checkpoint, {dtype} in the network{note}"

"""GA606 checkpoint-shape-mismatch."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import Group, GroupedCause, group_parameters, one_group
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.checkpoint import CheckpointContents
from graphaudit.findings import Finding
from graphaudit.text import pronouns

if TYPE_CHECKING:
    from graphaudit.capture.checkpoint import Mismatch


@dataclass(frozen=True)
class _Mismatched(GroupedCause):
    """Parameters the checkpoint holds entries of another shape or dtype for (the base of GA606's causes)."""

    names_subjects = True
    source: str  # the checkpoint: its path, or "the parameter dict"
    subject: str  # the cell holding them all, or the parameter
    names: tuple[str, ...]  # the parameters' attribute paths
    whole_cell: bool  # they are every parameter of the subject cell
    note: str  # a lone parameter's Parameter.name, when it differs from its path
    # The first of them, as the example:
    parameter: str  # its Parameter.name
    entry: str  # the checkpoint entry matched to it
    problem: str  # "shape" or "dtype"
    shape: tuple[int, ...]  # in the network
    dtype: str  # in the network
    found_shape: tuple[int, ...]  # in the checkpoint
    found_dtype: str  # in the checkpoint
    strict_load: bool  # load_param_into_net(strict_load=True): no dtype is converted

    @classmethod
    def of(cls, source: str, group: Group, mismatch: Mismatch, strict_load: bool) -> Any:
        (shape, dtype), (found_shape, found_dtype) = mismatch.expected, mismatch.found
        return cls(
            source,
            group.subject,
            group.names,
            group.cell is not None,
            group.note,
            mismatch.parameter,
            mismatch.entry,
            mismatch.problem,
            tuple(int(d) for d in shape),
            str(dtype),
            tuple(int(d) for d in found_shape),
            str(found_dtype),
            strict_load,
        )

    def example(self) -> str:
        """The first mismatch: ``fc.weight: [10, 4] in the checkpoint, [2, 4] in the network``."""
        entry = "" if self.entry == self.parameter else f" (entry {self.entry!r})"
        if self.problem == "shape":
            return (
                f"{self.parameter}{entry}: {list(self.found_shape)} in the checkpoint, {list(self.shape)} in the "
                "network"
            )
        note = " (strict_load=True converts nothing)" if self.strict_load else ""
        return f"{self.parameter}{entry}: {self.found_dtype} in the checkpoint, {self.dtype} in the network{note}"


@dataclass(frozen=True)
class CheckpointMismatch(_Mismatched):
    """Checkpoint entries matched to parameters of another shape (or an unconvertible dtype)."""

    def message(self) -> str:
        more = f" ({len(self.names)} parameters, e.g. {self.example()})"
        return (
            f"{self.source} holds {self.described()} with another {'shape' if self.problem == 'shape' else 'dtype'}"
            + (more if len(self.names) > 1 else f": {self.example()}")
            + ". load_param_into_net raises RuntimeError at the first of them, after loading the parameters "
            "before it (the network is left half loaded)."
        )

    def fix(self) -> str:
        return (
            "Use the checkpoint of this architecture (same widths, same number of classes); if these are "
            "replaced on purpose (a new head), drop their entries before loading and declare them: "
            "new_parameters=['head.*']."
        )


@dataclass(frozen=True)
class DeclaredNewMismatch(_Mismatched):
    """Parameters declared new, for which the checkpoint holds entries of another shape or dtype."""

    def message(self) -> str:
        they = pronouns(len(self.names))
        return (
            f"{self.described()} {they.be} declared new, and {self.source} has entries for {they.object} of "
            f"another shape or dtype (e.g. {self.example()})."
        )

    def fix(self) -> str:
        return (
            "Drop those entries before load_param_into_net (ms.load_checkpoint(path, choice_func=lambda "
            "name: not name.startswith('head.'))), or it raises RuntimeError."
        )


@register(
    "GA606",
    "checkpoint-shape-mismatch",
    severity="error",
    also=("info",),
    needs=(CheckpointContents,),
    causes=(CheckpointMismatch, DeclaredNewMismatch),
)
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
        cause = CheckpointMismatch.of(contents.source, group, found[group.nodes[0]], contents.strict_load)
        yield ctx.finding("error", group.subject, cause, group.graph_nodes, subjects=group.names)
    for group in one_group(ctx, declared):
        cause = DeclaredNewMismatch.of(contents.source, group, found[group.nodes[0]], contents.strict_load)
        yield ctx.finding("info", group.subject, cause, group.graph_nodes, subjects=group.names)

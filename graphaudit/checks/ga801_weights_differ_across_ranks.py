"""GA801 weights-differ-across-ranks."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit.checks import register
from graphaudit.checks._shared.grouping import one_group
from graphaudit.checks.context import AuditContext
from graphaudit.distributed.compare import (
    Difference,
    IncompleteWorld,
    ParameterDiffersAcrossRanks,
    ParameterMissingOnRanks,
    differences,
)
from graphaudit.evidence.ranks import RankFingerprints
from graphaudit.findings import Cause, Finding
from graphaudit.text import members

__all__ = ["CHECK_ID", "CHECK_NAME", "ParametersDifferAcrossRanks"]

CHECK_ID = "GA801"
CHECK_NAME = "weights-differ-across-ranks"


@dataclass(frozen=True)
class ParametersDifferAcrossRanks(Cause):
    """Several parameters that differ across ranks alike (one cause: a seed per rank), the first's difference told."""

    names_subjects = True
    names: tuple[str, ...]  # the parameters' attribute paths
    holder: str | None  # the cell all of whose parameters they are, when there is one
    first: Difference  # how the first of them differs (all alike: its kind and severity)

    def message(self) -> str:
        group = members(self.names, "parameter", holder=self.holder)
        return f"{group} are not the same on every rank. The first: {self.first.message()}"

    def fix(self) -> str:
        return self.first.fix()


@register(
    CHECK_ID,
    CHECK_NAME,
    severity="error",
    also=("warning",),
    needs=(RankFingerprints,),
    causes=(
        ParameterDiffersAcrossRanks,
        ParameterMissingOnRanks,
        IncompleteWorld,
        ParametersDifferAcrossRanks,
    ),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter whose initial value is not the same on every rank of a data-parallel job.

    What it does:
        When ``mindspore.communication`` is initialised (``init()`` was called, e.g. under
        ``msrun``) and the world has more than one rank, hashes every parameter of the network
        (blake2b of dtype, shape and bytes), exchanges the hashes with ``ops.AllGather`` and
        reports each parameter that differs across ranks (saying which ranks agree with which)
        or exists on some ranks only; the parameters one cause changed alike (a seed that
        depends on the rank changes them all) are one finding. It is an error, a warning for a
        parameter with ``requires_grad=False``. Without initialised communication it compares with the
        fingerprints of the other ranks given as files, ``audit(net, peers=["rank1.json"])``;
        the offline path is to save ``graphaudit.fingerprint.fingerprint(net)`` on each rank
        and run ``graphaudit compare rank*.json``. The check is a collective: call ``audit`` on every
        rank, or the others wait for it.

    Why is this bad:
        Data-parallel training averages the *gradients* of the ranks and applies the same
        update everywhere: the copies stay equal only if they start equal. A rank that drew
        its own random weights (a seed that depends on the rank, a checkpoint loaded on rank 0
        only) trains another model; the averaged gradient fits none of them, accuracy
        degrades, and which rank's weights get saved decides the result. Nothing raises.

    Example:
        ```python
        init()
        ms.set_seed(42 + get_rank())  # a different initialisation on every rank
        net = Net()
        ```

    Use instead:
        ```python
        init()
        ms.set_seed(42)  # the same initial weights everywhere; shuffle the data per rank instead
        net = Net()
        ```
    """
    nodes = {param.name: node for node, param in ctx.parameters()}
    # One rank-dependent seed (or one rank-only checkpoint) changes every parameter: one cause,
    # one finding per kind of difference (content, presence) and severity.
    causes: dict[tuple[str, str], list[Difference]] = {}
    for difference in differences(ctx.need(RankFingerprints).fingerprints):
        node = nodes.get(difference.subject)
        if node is None:
            yield ctx.finding(difference.severity, difference.subject, difference)
            continue
        causes.setdefault((difference.severity, type(difference).__name__), []).append(difference)
    for (severity, _), found in causes.items():
        for group in one_group(ctx, [nodes[d.subject] for d in found]):
            if len(found) == 1:
                yield ctx.finding(severity, found[0].subject, found[0], group.graph_nodes)
                continue
            cause = ParametersDifferAcrossRanks(group.names, group.holder, found[0])
            yield ctx.finding(
                severity, group.subject, cause, group.graph_nodes, subjects=[d.subject for d in found]
            )

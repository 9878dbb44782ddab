"""GA702 deprecated-keep-prob."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.grouping import cell_group
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing, pronouns


def _cells(names: tuple[str, ...]) -> str:
    return names[0] if len(names) == 1 else f"{len(names)} Dropout cells ({listing(names)})"


@dataclass(frozen=True)
class DropoutThroughKeepProb(Cause):
    """nn.Dropout cells whose rate came from the deprecated keep_prob (their p is None)."""

    names_subjects = True
    cells: tuple[str, ...]  # the dropouts' paths
    keep_prob: float

    def message(self) -> str:
        one, keep_prob = len(self.cells) == 1, self.keep_prob
        return (
            f"{_cells(self.cells)} {pronouns(len(self.cells)).be} configured through keep_prob={keep_prob:g} (p is "
            f"None), which MindSpore 2.10 deprecates; {'it drops' if one else 'each drops'} {1 - keep_prob:.0%} "
            "of its inputs."
        )

    def fix(self) -> str:
        keep_prob = self.keep_prob
        return f"Write nn.Dropout(p={1 - keep_prob:.2g}) (p is the probability to drop)" + (
            f", which does what keep_prob={keep_prob:g} does; if {keep_prob:.0%} is the rate you meant to drop, "
            f"write nn.Dropout(p={keep_prob:.2g})."
            if keep_prob < 0.5
            else "."
        )


@dataclass(frozen=True)
class KeepProbSwitchesDropoutOff(Cause):
    """nn.Dropout cells given both p and keep_prob=1.0: construct() returns its input unchanged."""

    names_subjects = True
    cells: tuple[str, ...]  # the dropouts' paths
    p: float

    def message(self) -> str:
        one = len(self.cells) == 1
        return (
            f"{_cells(self.cells)} {'was' if one else 'were'} given both p={self.p:g} and keep_prob=1.0: the rate "
            f"comes from p, but construct() returns its input unchanged when keep_prob == 1, so "
            f"{'it drops' if one else 'they drop'} nothing."
        )

    def fix(self) -> str:
        return f"Pass only p: nn.Dropout(p={self.p:g})."


@register(
    "GA702",
    "deprecated-keep-prob",
    severity="info",
    also=("warning",),
    causes=(DropoutThroughKeepProb, KeepProbSwitchesDropoutOff),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """An nn.Dropout configured through the deprecated keep_prob.

    What it does:
        ``nn.Dropout`` stores both ``p`` and ``keep_prob``; ``p`` stays ``None`` when the
        rate came from ``keep_prob`` (given, positionally or by name, or left to its default
        of 0.5). Such a Dropout is reported as info. It is a warning when both were given and
        ``keep_prob=1.0`` silently switches off a Dropout built with ``p > 0``. Only the
        stored result is visible, so ``nn.Dropout()`` and ``nn.Dropout(keep_prob=0.5)`` cannot
        be told apart, and a subclass that passes ``p`` (mindcv's ``Dropout``) is not reported.

    Why is this bad:
        MindSpore 2.10 still honours ``keep_prob`` and only logs a warning when the Dropout
        is built ("this parameter `keep_prob` will be deprecated, please use `p` instead"), so
        the behaviour is right today; but ``keep_prob`` means the opposite of the ``p`` of
        ``nn.Dropout(p=...)``, ``mint.nn.Dropout`` and other frameworks, which is how rates
        get inverted (see GA701), and it is going away. When both are given ``p`` sets the
        rate but ``construct`` still returns its input unchanged when ``keep_prob == 1``
        (measured on 2.10: ``nn.Dropout(p=0.3, keep_prob=1.0)`` zeroes nothing).

    Example:
        ```python
        self.drop = nn.Dropout(keep_prob=0.9)
        ```

    Use instead:
        ```python
        self.drop = nn.Dropout(p=0.1)
        ```
    """
    from mindspore import nn

    # One cause, one finding: the dropouts one config or block class built the same way.
    deprecated: dict[float, list[str]] = {}
    ignored: dict[float, list[str]] = {}
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        cell = ctx.structure.cells[node]
        if not isinstance(cell, nn.Dropout):
            continue
        p, keep_prob = getattr(cell, "p", None), getattr(cell, "keep_prob", None)
        if p is None:
            deprecated.setdefault(keep_prob, []).append(node)
        elif keep_prob == 1 and p > 0:
            ignored.setdefault(p, []).append(node)
    for rate, members, severity, kind in (
        *((k, m, "info", DropoutThroughKeepProb) for k, m in deprecated.items()),
        *((p, m, "warning", KeepProbSwitchesDropoutOff) for p, m in ignored.items()),
    ):
        group = cell_group(ctx, members)
        cause = kind(group.names, float(rate))
        yield ctx.finding(severity, group.subject, cause, members, subjects=group.names)

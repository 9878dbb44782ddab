"""GA701 dropout-rate-above-half."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import drop_probability, is_dropout
from graphaudit.checks._shared.grouping import holder
from graphaudit.checks.context import AuditContext
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

DEPRECATED_KEEP_PROB = "keep_prob"  # nn.Dropout's deprecated argument (see GA702)


def written_as(cell: Any) -> tuple[str, float | None, bool]:
    """How a dropout's rate was written: the keyword ("" unknown), its value, and whether nn.Dropout's keep_prob."""
    from mindspore import nn

    if isinstance(cell, nn.Dropout) and getattr(cell, "p", None) is None:
        return DEPRECATED_KEEP_PROB, float(cell.keep_prob), True
    for attribute in ("p", "prob", "drop_prob", "drop_rate", "keep_prob"):
        value = vars(cell).get(attribute)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return attribute, float(value), False
    return "", None, False


@dataclass(frozen=True)
class DropoutRateAboveHalf(Cause):
    """Dropouts of one class built with one rate above half: a keep probability written as a rate, or the reverse."""

    names_subjects = True
    cells: tuple[str, ...]  # the dropouts' paths
    cell_class: str
    rate: float  # the share of the inputs each drops
    keyword: str  # the argument the rate was written as ("p", "keep_prob"...; "" when not found)
    value: float | None  # what that argument was given
    deprecated: bool  # nn.Dropout built through its deprecated keep_prob (its first positional argument)

    def message(self) -> str:
        if len(self.cells) == 1:
            what, verb, their = f"{self.cells[0]} ({self.cell_class})", "drops", "its"
        else:
            what, verb, their = (
                f"{len(self.cells)} {self.cell_class} cells ({listing(self.cells)})",
                "each drop",
                "their",
            )
        if self.deprecated:
            configured = (
                f"{self.keyword}={self.value:g} (nn.Dropout's first argument is the probability to KEEP)"
            )
        else:
            configured = f"{self.keyword}={self.value:g}" if self.keyword else "its rate"
        return (
            f"{what} {verb} {self.rate:.0%} of {their} inputs, configured with {configured}. A rate above "
            "50% is almost always a keep probability written as a drop rate, or the reverse."
        )

    def fix(self) -> str:
        rate = self.rate
        return (
            f"If {1 - rate:.0%} is the rate you meant, write nn.Dropout(p={1 - rate:.2g}); if {rate:.0%} "
            + (
                f"really is meant, write nn.Dropout(p={rate:.2g}) (keep_prob is deprecated)."
                if self.keyword == DEPRECATED_KEEP_PROB
                else "really is meant, ignore this warning."
            )
        )


@register("GA701", "dropout-rate-above-half", severity="warning", causes=(DropoutRateAboveHalf,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A Dropout that drops more than half of its inputs.

    What it does:
        Reports every dropout-like cell (``nn.Dropout``, ``Dropout1d/2d/3d``,
        ``mint.nn.Dropout``, DropPath...) whose drop probability is above 0.5: one finding
        for all the dropouts of one class built with one rate (one ported configuration),
        each of them listed in its ``subjects``. For
        ``nn.Dropout`` the rate is read where MindSpore 2.10 keeps it, the ``ops.Dropout``
        primitive built in ``__init__`` (``p`` or ``keep_prob`` assigned later change nothing).

    Why is this bad:
        In MindSpore's ``nn.Dropout`` the first positional argument is ``keep_prob``, the
        probability to *keep*, the opposite of other frameworks: ``nn.Dropout(0.1)`` ported
        from ``torch.nn.Dropout(0.1)`` drops 90% of the activations instead of 10% (measured
        on 2.10: 0.900 of a tensor of ones zeroed, against 0.099 for ``nn.Dropout(0.9)``).
        Writing a keep probability as ``p`` makes the same mistake the other way round. The
        network still trains, badly. MindSpore's accuracy-tuning guide lists this mistake.

    Example:
        ```python
        self.drop = nn.Dropout(0.1)  # meant: drop 10%; does: keep 10%
        ```

    Use instead:
        ```python
        self.drop = nn.Dropout(p=0.1)
        ```
    """
    # One cause, one finding: every dropout of one class built with the same rate is one
    # mistake (a ported config, a shared constant), however many blocks repeat it.
    causes: dict[tuple[str, float, tuple[str, float | None, bool]], list[str]] = {}
    for node, _ in g.nodes_of_kind(ctx.graph, g.CELL):
        cell = ctx.structure.cells[node]
        if not is_dropout(cell):
            continue
        rate = drop_probability(cell)
        if rate is None or rate <= 0.5 + 1e-9:
            continue
        causes.setdefault((type(cell).__name__, float(rate), written_as(cell)), []).append(node)
    for (cls, rate, written), members in causes.items():
        paths = tuple(ctx.cell_path(node) for node in members)
        cause = DropoutRateAboveHalf(paths, cls, rate, *written)
        yield ctx.finding(
            "warning", paths[0] if len(paths) == 1 else holder(list(paths)), cause, members, subjects=paths
        )

"""What the dependency checks (GA340-GA343) share: where a dependency enters, and the numbers.

Example:
    >>> from graphaudit.capture.dependency.probe import Dependence
    >>> print(describe(Dependence("batch", True, 0.25, 1e-6, "", "blocks.0.attn")))
    by up to 25% of the output's largest value (the bound is 1e-06: 4 times the run-to-run noise of the same pass, at least 8 units in the last place of its dtype)
    >>> subject_and_nodes(Dependence("batch", True, 0.25, 1e-6, "", "blocks.0.attn"))
    ('blocks.0.attn', ('cell:blocks.0.attn',))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from graphaudit import graph as g

if TYPE_CHECKING:
    from graphaudit.capture.dependency.probe import Dependence

__all__ = ["MIXING", "describe", "judged_phrase", "moved", "subject_and_nodes", "where", "whose_output"]

#: Why the sequence checks (GA341-GA343) defer to GA340: they read what moves inside one sample.
MIXING = "the samples mix, so what moves inside one sample cannot be told apart; fix that first"


def subject_and_nodes(dependence: Dependence) -> tuple[str, tuple[str, ...]]:
    """The finding's subject (the cell where the dependency enters, ``(root)`` for the network) and node."""
    path = dependence.entry if dependence.entry is not None else dependence.judged
    return path or "(root)", (g.cell_node(path),)


def whose_output(judged: str) -> str:
    """Whose output was judged (*judged*: its cell path, ``""`` for the network), in words."""
    return "the network's output" if not judged else f"the output of '{judged}'"


def judged_phrase(dependence: Dependence) -> str:
    """Whose output was judged: the network's, or the outermost cell's with one row per sample."""
    return whose_output(dependence.judged)


def moved(change: float, tolerance: float) -> str:
    """How much an output moved (*change*, relative to its largest value), against the bound (*tolerance*).

    Example:
        >>> moved(0.005, 1e-6)[:40]
        "by up to 0.005 of the output's largest v"
    """
    amount = f"{change:.0%}" if change >= 0.01 else f"{change:.2g}"
    return (
        f"by up to {amount} of the output's largest value (the bound is {tolerance:.2g}: "
        "4 times the run-to-run noise of the same pass, at least 8 units in the last place of its dtype)"
    )


def describe(dependence: Dependence) -> str:
    """How much it moved, against the bound."""
    return moved(dependence.change, dependence.tolerance)


def where(subject: str, network: str = "the network's construct") -> str:
    """Where a dependency enters, in words: the cell (quoted), or *network* for ``(root)``."""
    return network if subject == "(root)" else f"'{subject}'"

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

__all__ = ["describe", "judged_phrase", "subject_and_nodes"]


def subject_and_nodes(dependence: Dependence) -> tuple[str, tuple[str, ...]]:
    """The finding's subject (the cell where the dependency enters, ``(root)`` for the network) and node."""
    path = dependence.entry if dependence.entry is not None else dependence.judged
    return path or "(root)", (g.cell_node(path),)


def judged_phrase(dependence: Dependence) -> str:
    """Whose output was judged: the network's, or the outermost cell's with one row per sample."""
    return "the network's output" if not dependence.judged else f"the output of '{dependence.judged}'"


def describe(dependence: Dependence) -> str:
    """How much it moved, against the bound."""
    change = dependence.change
    amount = f"{change:.0%}" if change >= 0.01 else f"{change:.2g}"
    return (
        f"by up to {amount} of the output's largest value (the bound is {dependence.tolerance:.2g}: "
        "4 times the run-to-run noise of the same pass, at least 8 units in the last place of its dtype)"
    )

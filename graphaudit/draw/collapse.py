"""Make large graphs drawable: collapse clusters below a depth, roll up repeated blocks.

A :class:`Plan` maps every item of a :class:`~graphaudit.draw.tree.Tree` to the key it is
drawn as: itself, the collapsed cluster (box) it falls into, or a roll-up box standing for a
run of consecutive sibling blocks of one class and one structure ("Bottleneck x6", with a multiplication sign).
:func:`choose_plan` lowers the depth until the drawing has at most ``max_nodes`` nodes.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.SequentialCell([nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()]) for _ in range(4)])
    >>> from graphaudit.draw.tree import build_tree
    >>> tree = build_tree(graphaudit.to_networkx(net))
    >>> plan(tree).count, plan(tree, depth=1).count, plan(tree, rollup=True).count
    (13, 5, 2)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from graphaudit.draw.tree import Tree

__all__ = ["ROLLUP_KINDS", "Plan", "choose_plan", "plan"]

ROLLUP_KINDS = frozenset({"call", "cell"})
ROLLUP_PREFIX = "rollup:"


@dataclass
class Plan:
    """Where each item is drawn, the roll-ups made, and why the view was reduced."""

    drawn: dict[str, str]
    rollups: dict[str, tuple[list[str], int]]
    depth: int | None
    rolled: bool
    count: int = 0
    notes: list[str] = field(default_factory=list)


def _runs(tree: Tree, keys: list[str]) -> list[tuple[list[str], int]]:
    """Maximal runs of at least two consecutive units of the same structure, with their count.

    A unit is one block (a cell or a call) and the operations just before it, so that
    ``cat, layer, cat, layer`` (DenseNet) rolls up like ``layer, layer`` (ResNet).
    """
    units: list[tuple[list[str], str]] = []
    pending: list[str] = []
    for key in keys:
        pending.append(key)
        if tree.items[key].kind in ROLLUP_KINDS:
            units.append((pending, "|".join(tree.items[k].signature for k in pending)))
            pending = []
    runs: list[tuple[list[str], int]] = []
    start = 0
    for end in range(1, len(units) + 1):
        if end == len(units) or units[end][1] != units[start][1]:
            if end - start > 1:
                runs.append(([k for unit, _ in units[start:end] for k in unit], end - start))
            start = end
    return runs


def plan(tree: Tree, *, depth: int | None = None, rollup: bool = False) -> Plan:
    """Draw every item at most *depth* levels deep; with *rollup*, merge repeated blocks.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.tree import build_tree
        >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
        >>> plan(tree, depth=0).drawn
        {'cell:': 'cell:', 'cell:0': 'cell:'}
    """
    drawn: dict[str, str] = {}
    rollups: dict[str, tuple[list[str], int]] = {}

    def roll(keys: list[str]) -> None:
        if not rollup:
            return
        for run, count in _runs(tree, keys):
            box = ROLLUP_PREFIX + run[0]
            rollups[box] = (run, count)
            for key in run:
                drawn[key] = box

    roll(tree.roots)
    for key, item in tree.items.items():
        parent = item.parent
        if parent is not None and drawn[parent] != parent:
            drawn[key] = drawn[parent]
        elif depth is not None and item.depth > depth:
            drawn[key] = parent  # type: ignore[assignment]  # depth > 0: there is a parent
        elif key not in drawn:
            drawn[key] = key
            if depth is None or item.depth < depth:
                roll(item.children)
    return Plan(drawn, rollups, depth, bool(rollups), len(set(drawn.values())))


def choose_plan(
    tree: Tree,
    *,
    depth: int | None = None,
    rollup: bool | None = None,
    max_nodes: int = 1500,
    rollup_threshold: int = 400,
) -> Plan:
    """The plan to draw: as asked, then reduced until at most *max_nodes* nodes are drawn.

    With ``rollup=None`` repeated blocks are rolled up once the drawing has more than
    *rollup_threshold* nodes; then the depth is lowered one level at a time. The reasons
    are kept in :attr:`Plan.notes` (shown in the drawing's title).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.tree import build_tree
        >>> net = nn.SequentialCell([nn.SequentialCell([nn.Dense(2, 2), nn.Tanh()]) for _ in range(30)])
        >>> chosen = choose_plan(build_tree(graphaudit.to_networkx(net)), rollup=False, max_nodes=40)
        >>> chosen.depth, chosen.count, chosen.notes[0][:42]
        (1, 31, 'collapsed to depth 1: depth 2 would draw 9')
    """
    full_depth = tree.max_depth()
    level = full_depth if depth is None else min(depth, full_depth)
    chosen = plan(tree, depth=level, rollup=bool(rollup))
    if rollup is None and chosen.count > rollup_threshold:
        rolled = plan(tree, depth=level, rollup=True)
        if rolled.count < chosen.count:
            rolled.notes.append(
                f"repeated blocks rolled up: {chosen.count} nodes is over {rollup_threshold} (rollup=False expands them)"
            )
            chosen = rolled
    first = chosen
    while chosen.count > max_nodes and level > 0:
        level -= 1
        chosen = plan(tree, depth=level, rollup=rollup is not False)
    if chosen is not first:
        chosen.notes = [
            *first.notes,
            f"collapsed to depth {level}: depth {first.depth} would draw {first.count} nodes, over "
            f"max_nodes={max_nodes} (pass depth=... and max_nodes=... to choose)",
        ]
    return chosen

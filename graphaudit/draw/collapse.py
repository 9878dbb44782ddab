"""Make large graphs drawable: collapse clusters, roll up repeated blocks.

What is drawn is decided by a *state*: the clusters that are open (drawn with their
children; a closed one is one box) and the roll-ups that are active (a run of consecutive
sibling blocks of one class and one structure drawn as one box, "Bottleneck x6" with a
multiplication sign). :func:`assign` turns a state into a :class:`Plan`, which maps every
item of a :class:`~graphaudit.draw.tree.Tree` to the key it is drawn as. The HTML
explorer's script does the same with the state the reader clicks to (``assets/explorer.js``,
``assign``). :func:`plan` is the state of a depth; :func:`choose_plan` lowers the depth
until the drawing has at most ``max_nodes`` nodes.

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.SequentialCell([nn.SequentialCell([nn.Dense(2, 2), nn.ReLU()]) for _ in range(4)])
    >>> from graphaudit.draw.build import build_tree
    >>> tree = build_tree(graphaudit.to_networkx(net))
    >>> plan(tree).count, plan(tree, depth=1).count, plan(tree, rollup=True).count
    (13, 5, 2)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from graphaudit.draw.tree import Tree

__all__ = [
    "ROLLUP_KINDS",
    "ROLLUP_PREFIX",
    "Plan",
    "Run",
    "assign",
    "choose_plan",
    "plan",
    "repeats_of",
    "runs_of",
]

ROLLUP_KINDS = frozenset({"call", "cell"})
ROLLUP_PREFIX = "rollup:"


@dataclass(frozen=True)
class Run:
    """Consecutive sibling blocks of one structure (with the operations before each), under *parent*."""

    parent: str | None
    members: tuple[str, ...]
    count: int

    @property
    def key(self) -> str:
        return ROLLUP_PREFIX + self.members[0]


@dataclass
class Plan:
    """Where each item is drawn, the roll-ups made, the open clusters, and why the view was reduced."""

    drawn: dict[str, str]
    rollups: dict[str, tuple[list[str], int]]
    depth: int | None
    rolled: bool
    count: int = 0
    notes: list[str] = field(default_factory=list)
    open: set[str] = field(default_factory=set)


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


def runs_of(tree: Tree) -> dict[str, Run]:
    """Every run that could be rolled up, under every item and at the top level, by key.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.build import build_tree
        >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.ReLU(), nn.ReLU()])))
        >>> runs_of(tree)
        {'rollup:cell:0': Run(parent='cell:', members=('cell:0', 'cell:1'), count=2)}
    """
    found: dict[str, Run] = {}
    for parent, keys in [(None, tree.roots), *((k, i.children) for k, i in tree.items.items() if i.children)]:
        for members, count in _runs(tree, keys):
            run = Run(parent, tuple(members), count)
            found[run.key] = run
    return found


def assign(tree: Tree, open_: Iterable[str], active: Iterable[Run]) -> Plan:
    """The plan of a state: *open_* clusters drawn with their children, *active* runs rolled up.

    An item inside a closed cluster or an active run is drawn as that box; every other item
    is drawn as itself.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.build import build_tree
        >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
        >>> assign(tree, [], []).drawn
        {'cell:': 'cell:', 'cell:0': 'cell:'}
    """
    opened = set(open_)
    box_of = {member: run.key for run in active for member in run.members}
    rollups = {run.key: (list(run.members), run.count) for run in active}
    drawn: dict[str, str] = {}
    for key, item in tree.items.items():
        parent = item.parent
        if parent is not None and (drawn[parent] != parent or parent not in opened):
            drawn[key] = drawn[parent]
        else:
            drawn[key] = box_of.get(key, key)
    used = {box for box in drawn.values() if box in rollups}
    rollups = {box: rollups[box] for box in rollups if box in used}
    shown_open = {k for k in opened if drawn.get(k) == k and tree.items[k].children}
    return Plan(drawn, rollups, None, bool(rollups), len(set(drawn.values())), open=shown_open)


def repeats_of(tree: Tree) -> set[str]:
    """The later calls of a cell called several times whose inside is the first call's: drawn closed.

    Example:
        >>> import graphaudit, numpy as np
        >>> from mindspore import nn, Tensor
        >>> from graphaudit.draw.build import build_tree
        >>> block = nn.SequentialCell([nn.Dense(2, 2)])
        >>> graph = graphaudit.to_networkx(nn.SequentialCell([block, block]), inputs=Tensor(np.ones((1, 2), np.float32)))
        >>> sorted(repeats_of(build_tree(graph)))
        ['call:0#2']
    """
    items = tree.items
    return {k for k, i in items.items() if i.first and i.children and items[i.first].signature == i.signature}


def plan(
    tree: Tree,
    *,
    depth: int | None = None,
    rollup: bool = False,
    runs: dict[str, Run] | None = None,
    repeats: bool = True,
) -> Plan:
    """Draw every item at most *depth* levels deep; with *rollup*, merge repeated blocks.

    Unless *repeats*, the later calls of a cell called several times are closed boxes (their
    inside is drawn once, in the first call).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.build import build_tree
        >>> tree = build_tree(graphaudit.to_networkx(nn.SequentialCell([nn.Dense(2, 2)])))
        >>> plan(tree, depth=0).drawn
        {'cell:': 'cell:', 'cell:0': 'cell:'}
    """
    opened = {k for k, item in tree.items.items() if item.children and (depth is None or item.depth < depth)}
    if not repeats:
        opened -= repeats_of(tree)
    active = []
    if rollup:
        candidates = runs_of(tree) if runs is None else runs
        active = [run for run in candidates.values() if run.parent is None or run.parent in opened]
    chosen = assign(tree, opened, active)
    chosen.depth = depth
    return chosen


def choose_plan(
    tree: Tree,
    *,
    depth: int | None = None,
    rollup: bool | None = None,
    max_nodes: int = 1500,
    rollup_threshold: int = 400,
    repeats: bool = True,
) -> Plan:
    """The plan to draw: as asked, then reduced until at most *max_nodes* nodes are drawn.

    With ``rollup=None`` repeated blocks are rolled up once the drawing has more than
    *rollup_threshold* nodes; then the depth is lowered one level at a time. The reasons
    are kept in :attr:`Plan.notes` (shown in the drawing's title).

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> from graphaudit.draw.build import build_tree
        >>> net = nn.SequentialCell([nn.SequentialCell([nn.Dense(2, 2), nn.Tanh()]) for _ in range(30)])
        >>> chosen = choose_plan(build_tree(graphaudit.to_networkx(net)), rollup=False, max_nodes=40)
        >>> chosen.depth, chosen.count, chosen.notes[0][:42]
        (1, 31, 'collapsed to depth 1: depth 2 would draw 9')
    """
    full_depth = tree.max_depth()
    level = full_depth if depth is None else min(depth, full_depth)
    runs = runs_of(tree) if rollup is not False else {}
    chosen = plan(tree, depth=level, rollup=bool(rollup), runs=runs, repeats=repeats)
    if rollup is None and chosen.count > rollup_threshold:
        rolled = plan(tree, depth=level, rollup=True, runs=runs, repeats=repeats)
        if rolled.count < chosen.count:
            rolled.notes.append(
                f"repeated blocks rolled up: {chosen.count} nodes is over {rollup_threshold} (rollup=False expands them)"
            )
            chosen = rolled
    first = chosen
    while chosen.count > max_nodes and level > 0:
        level -= 1
        chosen = plan(tree, depth=level, rollup=rollup is not False, runs=runs, repeats=repeats)
    if chosen is not first:
        chosen.notes = [
            *first.notes,
            f"collapsed to depth {level}: depth {first.depth} would draw {first.count} nodes, over "
            f"max_nodes={max_nodes} (pass depth=... and max_nodes=... to choose)",
        ]
    return chosen

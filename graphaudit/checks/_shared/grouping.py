"""One cause, one finding: gather the parameters one cause touches under the cell that holds them.

A head left out of the optimizer leaves out its weight *and* its bias; a backbone left out
leaves out hundreds of parameters. :func:`group_parameters` takes the parameters a check
found (*members*) among those the same cause could have touched (*universe*: every
trainable parameter, for GA201) and gathers them under the outermost cell all of whose
parameters in the universe are members: that cell is the group's subject. A member whose
cell also holds parameters that are not members stays a group of its own.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.checks.context import AuditContext
    >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    >>> ctx = AuditContext.build(net)
    >>> nodes = {p.name: n for n, p in ctx.parameters()}
    >>> [(g.subject, g.names) for g in group_parameters(ctx, [nodes["1.weight"], nodes["1.bias"], nodes["0.bias"]], nodes.values())]
    [('1', ('1.weight', '1.bias')), ('0.bias', ('0.bias',))]
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from graphaudit.findings import Cause
from graphaudit.text import Pronouns, listing, members, pronouns

if TYPE_CHECKING:
    from graphaudit.checks.context import AuditContext

__all__ = [
    "Group",
    "GroupedCause",
    "Pronouns",
    "cell_group",
    "group_parameters",
    "holder",
    "holds",
    "listing",
    "one_group",
    "pattern",
    "probe_groups",
]


ROOT = "(root)"  # how a finding names the network itself (a cell path, in the graph, of "")


class GroupedCause(Cause):
    """The base of a cause about a :class:`Group` of parameters: its facts ``subject``, ``names``,
    ``whole_cell`` (every parameter of the subject cell is a member) and ``note`` (a lone member's
    ``Parameter.name``), and how a message names them (:meth:`described`).

    Not a dataclass of its own: the causes that derive from it declare those fields where their
    facts are listed, so that each keeps its own order in JSON.
    """

    subject: str
    names: tuple[str, ...]
    whole_cell: bool
    note: str

    def described(self, what: str = "parameter") -> str:
        """The group in words: ``head.bias``, or ``the 2 parameters of head (head.weight and head.bias)``."""
        return members(self.names, what, holder=self.subject if self.whole_cell else None, note=self.note)


@dataclass(frozen=True)
class Group:
    """Parameters one cause touches: the group's subject, the members (attribute paths) and nodes, its cell."""

    subject: str
    names: tuple[str, ...]
    nodes: tuple[str, ...]
    cell: str | None = None  # the cell node whose every parameter (of the universe) is a member
    note: str = ""  # for a lone member whose Parameter.name differs from its path: that name

    @property
    def graph_nodes(self) -> tuple[str, ...]:
        """The nodes a finding about the group points at: its cell, then its parameters."""
        return (self.cell, *self.nodes) if self.cell is not None else self.nodes

    def listing(self) -> str:
        """The members as text: ``a``, ``a and b``, ``a, b, c, d and 12 more``."""
        return listing(self.names)

    @property
    def holder(self) -> str | None:
        """The cell all of whose parameters (of the universe) are members, by path; ``None`` when there is none."""
        return self.subject if self.cell is not None else None

    def describe(self, what: str) -> str:
        """The group in a sentence: ``head.bias``, or ``the 2 trainable parameters of head (...)``."""
        return members(self.names, what, holder=self.holder, note=self.note)

    def pronouns(self) -> Pronouns:
        """The words that refer back to the group: singular for one member, plural for more."""
        return pronouns(len(self.names))


def holds(cell: str, path: str) -> bool:
    """Whether cell *cell* holds *path* (a cell or parameter path inside it, not *cell* itself).

    ``(root)``, the network, holds every other path.

    Example:
        >>> holds("backbone", "backbone.0.1"), holds("backbone", "backbone"), holds("back", "backbone.0")
        (True, False, False)
        >>> holds("(root)", "head.0"), holds("(root)", "(root)")
        (True, False)
    """
    return path != cell and (cell == ROOT or path.startswith(f"{cell}."))


def _prefixes(path: str) -> list[str]:
    """``a.b.c`` -> ``["a", "a.b"]``: the cell paths above an attribute path, outermost first."""
    parts = path.split(".")
    return [".".join(parts[:end]) for end in range(1, len(parts))]


def one_group(ctx: AuditContext, members: Sequence[str]) -> list[Group]:
    """All of *members* as one group (none when empty), under the innermost cell holding them all.

    For causes that are one mistake however many parameters it touches (an optimizer built
    from ``net.get_parameters()`` holds every BatchNorm statistic). The subject is that
    cell's path, ``(root)`` for the network itself, or the name of a lone member.

    Example:
        >>> from mindspore import nn
        >>> from graphaudit.checks.context import AuditContext
        >>> ctx = AuditContext.build(nn.SequentialCell([nn.BatchNorm1d(2), nn.BatchNorm1d(2)]))
        >>> stats = [n for n, p in ctx.parameters() if "moving" in p.name]
        >>> [(g.subject, len(g.names)) for g in one_group(ctx, stats)]
        [('(root)', 4)]
    """
    if not members:
        return []
    graph = ctx.graph
    names = tuple(ctx.subject_of(n) for n in members)
    if len(members) == 1:
        return [Group(names[0], names, tuple(members), note=ctx.named_as(members[0]))]
    common = _prefixes(graph.nodes[members[0]]["path"])
    for node in members[1:]:
        mine = _prefixes(graph.nodes[node]["path"])
        common = [p for p, q in zip(common, mine) if p == q]
    path = common[-1] if common else ""
    return [Group(path or ROOT, names, tuple(members), ctx.cell_nodes_by_path().get(path))]


def group_parameters(ctx: AuditContext, members: Sequence[str], universe: Iterable[str]) -> list[Group]:
    """*members* (parameter nodes) gathered by cell, in the order of their first member."""
    if not members:
        return []
    graph = ctx.graph
    member_set = set(members)
    count_in: dict[str, int] = {}
    for node in universe:
        for prefix in _prefixes(graph.nodes[node]["path"]):
            count_in[prefix] = count_in.get(prefix, 0) + 1
    members_in: dict[str, int] = {}
    for node in member_set:
        for prefix in _prefixes(graph.nodes[node]["path"]):
            members_in[prefix] = members_in.get(prefix, 0) + 1
    by_path = ctx.cell_nodes_by_path()
    groups: dict[str, list[str]] = {}
    for node in members:
        home = next(
            (
                prefix
                for prefix in _prefixes(graph.nodes[node]["path"])
                if members_in.get(prefix, 0) > 1 and members_in[prefix] == count_in.get(prefix, 0)
            ),
            None,
        )
        groups.setdefault(home if home is not None else f"\0{node}", []).append(node)
    found = []
    for key, nodes in groups.items():
        names = tuple(ctx.subject_of(n) for n in nodes)
        if key.startswith("\0"):
            found.append(Group(names[0], names, tuple(nodes), note=ctx.named_as(nodes[0])))
        else:
            found.append(Group(key, names, tuple(nodes), by_path.get(key)))
    return found


def holder(paths: list[str]) -> str:
    """The innermost cell holding every one of *paths*: ``blocks`` for ``blocks.0.drop, blocks.1.drop``.

    Example:
        >>> holder(["h.0.attn.drop", "h.0.drop", "h.1.drop"]), holder(["a", "b"])
        ('h', '(root)')
    """
    above = reversed(_prefixes(paths[0])) if paths else ()
    return next((cell for cell in above if all(holds(cell, path) for path in paths)), ROOT)


def cell_group(ctx: AuditContext, cells: Sequence[str]) -> Group:
    """*cells* (cell nodes one cause built the same way) as one group: a lone cell's path, else their holder.

    Example:
        >>> from mindspore import nn
        >>> from graphaudit.checks.context import AuditContext
        >>> ctx = AuditContext.build(nn.SequentialCell([nn.Dropout(p=0.9), nn.Dropout(p=0.9)]))
        >>> drops = [n for n, cell in ctx.structure.cells.items() if isinstance(cell, nn.Dropout)]
        >>> group = cell_group(ctx, drops)
        >>> group.subject, group.names, group.pronouns().be
        ('(root)', ('0', '1'), 'are')
    """
    paths = tuple(ctx.cell_path(node) for node in cells)
    subject = paths[0] if len(paths) == 1 else holder(list(paths))
    return Group(subject, paths, tuple(cells), ctx.cell_nodes_by_path().get(subject))


_INDEX = re.compile(r"(?<![^.])\d+(?![^.])")


def pattern(path: str) -> str:
    """*path* with each container index as ``*``: the cells one loop or one block class built alike.

    A mistake in a block's constructor or ``construct`` repeats at ``blocks.0.x``,
    ``blocks.1.x``...; checks gather what they find under one pattern into one finding.

    Example:
        >>> pattern("blocks.3.attn.0.proj"), pattern("layer2"), pattern("1")
        ('blocks.*.attn.*.proj', 'layer2', '*')
    """
    return _INDEX.sub("*", path)


def probe_groups(ctx: AuditContext, probes: Sequence[Any]) -> list[tuple[Group, list[Any]]]:
    """*probes* (records with ``node`` and ``subject``) as one group, with the records in it.

    The records whose node the graph holds are one :func:`one_group`; a record whose node it
    does not hold (a parameter the probe met outside the captured tree) is a group of its own.
    """
    held = [p for p in probes if p.node in ctx.graph]
    found = [(group, held) for group in one_group(ctx, [p.node for p in held])]
    return found + [
        (Group(p.subject, (p.subject,), (p.node,)), [p]) for p in probes if p.node not in ctx.graph
    ]

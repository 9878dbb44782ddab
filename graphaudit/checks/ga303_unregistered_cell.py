"""GA303 unregistered-cell."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.trace import TracedPass
from graphaudit.findings import Cause, Finding
from graphaudit.text import counted, is_are, listing, pronouns


@dataclass(frozen=True)
class UnregisteredCells(Cause):
    """Cells called in the forward pass but not registered in the network (held in a plain container)."""

    names_subjects = True
    container: str  # the attribute holding them (their subject without its index), or where they were called
    cells: tuple[str, ...]  # each cell's subject: "blocks[1]", or "<Dense> in (root)"
    classes: tuple[str, ...]  # their classes, each once
    parameters: int  # how many parameters they hold
    values: int  # how many numbers those parameters hold

    def message(self) -> str:
        if len(self.cells) == 1:
            what = f"{self.cells[0]} is a {self.classes[0]} called in the forward pass but not registered in the network"
            whose = "its"
        else:
            what = (
                f"{self.container} holds {len(self.cells)} {listing(self.classes, None)} cells ({listing(self.cells)}) "
                "called in the forward pass but not registered in the network"
            )
            whose = "their"
        they = pronouns(self.parameters)
        return (
            f"{what} (held in a plain Python container or created in construct): {whose} "
            f"{counted(self.parameters, 'parameter')} ({self.values} values) {is_are(self.parameters)} not in "
            f"net.trainable_params(), so {they.subject} {they.be} never trained nor saved."
        )

    def fix(self) -> str:
        return (
            "Register the cell: assign it as an attribute (self.name = cell), or hold several in "
            "nn.CellList / nn.SequentialCell / nn.CellDict instead of a list, tuple or dict."
        )


def _encloser(ctx: AuditContext, node: str) -> str | None:
    for source, _, attrs in ctx.graph.in_edges(node, data=True):
        if attrs["kind"] == g.ENCLOSES:
            return source
    return None


def _outermost_unregistered(ctx: AuditContext, call: str) -> tuple[str, str | None]:
    """The outermost call of a cell outside the tree around *call*, and the registered call around it."""
    parent = _encloser(ctx, call)
    while parent is not None and ctx.graph.nodes[parent]["cell"] == "":
        call, parent = parent, _encloser(ctx, parent)
    return call, parent


def _attribute_name(ctx: AuditContext, owner: str | None, params: list[str]) -> str | None:
    """``extra[0]`` when the registered cell *owner* keeps the stray cell in a list/tuple/dict attribute."""
    from mindspore import nn

    cell = ctx.structure.cells.get(ctx.graph.nodes[owner]["cell"]) if owner is not None else None
    wanted = {id(ctx.structure.parameters[p]) for p in params if p in ctx.structure.parameters}
    if cell is None or not wanted:
        return None
    for attr, value in vars(cell).items():
        if isinstance(value, (list, tuple)):
            items = list(enumerate(value))
        elif isinstance(value, dict):
            items = [(repr(k), v) for k, v in value.items()]
        else:
            continue
        for key, item in items:
            if isinstance(item, nn.Cell) and wanted & {id(p) for p in item.get_parameters()}:
                return f"{attr}[{key}]"
    return None


_INDEX = re.compile(r"\[[^\]]*\]")  # hidden[0] -> hidden: the container


@register("GA303", "unregistered-cell", severity="error", needs=(TracedPass,), causes=(UnregisteredCells,))
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A cell called in the forward pass that is not part of the network tree.

    What it does:
        Reports every cell that the traced forward pass called and whose parameters are
        unknown to the network: a cell kept in a plain Python ``list``, ``tuple`` or ``dict``
        attribute, or created inside ``construct``. The subject is the attribute that holds
        it (``blocks[1]``) when it can be found, else ``<Class> in <path of the caller>``.

    Why is this bad:
        MindSpore registers a sub-cell only when it is assigned as an attribute or put in a
        ``SequentialCell`` / ``CellList`` / ``CellDict``. A cell in a plain list still runs, so
        the network works, but its parameters are missing from ``net.trainable_params()``:
        the optimizer never updates them and ``save_checkpoint`` never saves them.

    Example:
        ```python
        self.blocks = [nn.Dense(8, 8) for _ in range(3)]
        ```

    Use instead:
        ```python
        self.blocks = nn.CellList([nn.Dense(8, 8) for _ in range(3)])
        ```
    """
    graph = ctx.graph
    stray: dict[str, tuple[str, str | None, list[str]]] = {}
    for call, attrs in g.nodes_of_kind(graph, g.CALL):
        if attrs["cell"] != "":
            continue
        params = [
            s
            for s, _, d in graph.in_edges(call, data=True)
            if d["kind"] == g.READS and not graph.nodes[s].get("registered", True)
        ]
        if not params:
            continue
        outer, owner = _outermost_unregistered(ctx, call)
        key = outer.rsplit("#", 1)[0]  # one entry per cell object, however often it is called
        entry = stray.setdefault(key, (outer, owner, []))
        entry[2].extend(p for p in params if p not in entry[2])

    # One cause, one finding: a plain list (or dict) of cells is one mistake, however many it holds.
    groups: dict[str, list[tuple[str, str, str, list[str]]]] = {}
    for outer, owner, params in stray.values():
        class_name = graph.nodes[outer]["class_name"]
        owner_path = graph.nodes[owner]["path"] if owner is not None else ""
        attribute = _attribute_name(ctx, owner, params)
        if attribute is not None:
            subject = f"{owner_path}.{attribute}" if owner_path else attribute
        else:
            subject = f"<{class_name}> in {owner_path or '(root)'}"
        groups.setdefault(_INDEX.sub("", subject), []).append((subject, class_name, outer, params))
    for container, members in groups.items():
        params = [p for *_, found in members for p in found]
        numel = sum(int(graph.nodes[p]["numel"]) for p in params)
        classes = tuple(dict.fromkeys(m[1] for m in members))
        cells = tuple(m[0] for m in members)
        cause = UnregisteredCells(container, cells, classes, len(params), numel)
        yield ctx.finding(
            "error",
            cells[0] if len(members) == 1 else container,
            cause,
            [node for m in members for node in (m[2], *m[3])],
            subjects=cells,
        )

"""GA101 repeated-cell-in-container.

One cause is one finding: the containers whose repetition one line of the user's code makes
(``[block] * depth`` in a ``stage()`` helper that builds every stage) are one finding, and so
are the containers one loop builds alike (``blocks.0.body``, ``blocks.1.body``). The line is
read from the source of the classes and helpers that build each container (:func:`_site`):
the assignment of the attribute that holds it, and the helpers that assignment calls.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import sysconfig
import textwrap
import types
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from graphaudit import graph as g
from graphaudit.checks import register
from graphaudit.checks._shared.cells import holds_parameters, is_container
from graphaudit.checks._shared.grouping import holder, pattern
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.design import DeclaredDesign
from graphaudit.findings import Cause, Finding
from graphaudit.text import listing

_DEPTH = 3  # helpers calling helpers, followed this deep from the assignment


@dataclass(frozen=True)
class Site:
    """The one list repetition (``[block] * depth``) in the user's code that built a container."""

    file: str
    line: int
    column: int
    code: str  # its source text: "[block] * depth"
    where: str  # the function it is in: "stage()", "Stage.__init__()"
    times: int | None  # the repetition count when it is a literal (``[block] * 3``)


@dataclass(frozen=True)
class _Source:
    node: ast.AST  # the function's definition
    text: str  # its dedented source
    file: str
    first: int  # the file's line of the text's first line


@functools.cache
def _library_roots() -> tuple[str, ...]:
    """The folders of Python's standard library and of installed packages (NumPy, MindSpore, zoos)."""
    paths = sysconfig.get_paths()
    keys = ("stdlib", "platstdlib", "purelib", "platlib")
    return tuple(sorted({os.path.join(os.path.realpath(paths[k]), "") for k in keys if k in paths}))


def _user_function(obj: Any) -> types.FunctionType | None:
    """*obj* as a plain Python function of the user's (a method's function), else ``None``.

    Functions of the standard library and of installed packages are not the user's: a
    repetition found in them (``[fill] * n`` in NumPy) built no container of theirs.
    """
    from graphaudit.capture.compilation.jit import python_function

    obj = python_function(getattr(obj, "__func__", obj))
    if not isinstance(obj, types.FunctionType):
        return None
    module = (getattr(obj, "__module__", "") or "").partition(".")[0]
    if module in ("mindspore", "graphaudit"):
        return None
    return None if os.path.realpath(obj.__code__.co_filename).startswith(_library_roots()) else obj


def _literal(node: ast.AST) -> bool:
    """Whether *node* is a constant (``1``, ``None``, ``(0, 0)``, ``-1``): not a cell."""
    try:
        ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return False
    return True


@functools.cache
def _source(function: types.FunctionType) -> _Source | None:
    try:
        lines, first = inspect.getsourcelines(function)
        file = inspect.getsourcefile(function) or ""
        text = textwrap.dedent("".join(lines))
        tree = ast.parse(text)
    except (OSError, TypeError, SyntaxError, IndentationError):
        return None
    node = tree.body[0] if tree.body else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    return _Source(node, text, file, first)


def _repetitions(source: _Source, nodes: list[ast.AST], where: str) -> set[Site]:
    """The list repetitions in *nodes*: ``[x] * n`` or ``n * (x,)`` of something other than constants."""
    found = set()
    for node in nodes:
        for sub in ast.walk(node):
            if not (isinstance(sub, ast.BinOp) and isinstance(sub.op, ast.Mult)):
                continue
            for side, other in ((sub.left, sub.right), (sub.right, sub.left)):
                if (
                    isinstance(side, (ast.List, ast.Tuple))
                    and side.elts
                    and not all(_literal(e) for e in side.elts)  # [1] * n: strides, [(0, 0)] * n: paddings
                ):
                    times = (
                        other.value if isinstance(other, ast.Constant) and type(other.value) is int else None
                    )
                    code = ast.get_source_segment(source.text, sub) or ""
                    line = source.first + sub.lineno - 1
                    found.add(Site(source.file, line, sub.col_offset, " ".join(code.split()), where, times))
                    break
    return found


def _lookup(function: types.FunctionType, name: str) -> Any:
    """What *name* means inside *function*: a closure's variable, else a global."""
    code = function.__code__
    if name in code.co_freevars and function.__closure__:
        try:
            return function.__closure__[code.co_freevars.index(name)].cell_contents
        except ValueError:  # an empty cell
            return None
    return function.__globals__.get(name)


def _callees(
    function: types.FunctionType, nodes: list[ast.AST], owner: type | None, me: str | None
) -> list[Any]:
    """The user's functions that *nodes* call: ``stage(...)``, ``self._make_layer(...)``, ``helpers.stage(...)``."""
    found = []
    for node in nodes:
        for call in ast.walk(node):
            if not isinstance(call, ast.Call):
                continue
            func, target = call.func, None
            if isinstance(func, ast.Name):
                target = _lookup(function, func.id)
            elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
                if func.value.id == me and owner is not None:
                    target = inspect.getattr_static(owner, func.attr, None)
                else:
                    base = _lookup(function, func.value.id)
                    target = (
                        getattr(base, func.attr, None) if isinstance(base, (types.ModuleType, type)) else None
                    )
            if (helper := _user_function(target)) is not None:
                found.append(helper)
    return list(dict.fromkeys(found))


def _helper_sites(function: types.FunctionType, depth: int, seen: set[Any]) -> set[Site]:
    """The repetitions in a helper, or (none there) in the helpers it calls."""
    if function in seen or (source := _source(function)) is None:
        return set()
    seen.add(function)
    found = _repetitions(source, [source.node], f"{function.__qualname__}()")
    if not found and depth > 1:
        for callee in _callees(function, [source.node], None, None):
            found |= _helper_sites(callee, depth - 1, seen)
    return found


def _local_values(node: ast.AST, names: set[str]) -> list[ast.AST]:
    """In a function, what its local *names* are given: ``x = ...``, ``x += ...``, ``x.append(...)``."""
    found: list[ast.AST] = []
    for sub in ast.walk(node):
        targets = (
            sub.targets
            if isinstance(sub, ast.Assign)
            else [sub.target]
            if isinstance(sub, ast.AugAssign)
            else []
        )
        if any(isinstance(t, ast.Name) and t.id in names for t in targets):
            found.append(sub.value)  # type: ignore[attr-defined]
        elif (
            isinstance(sub, ast.Call)
            and isinstance(sub.func, ast.Attribute)
            and isinstance(sub.func.value, ast.Name)
            and sub.func.value.id in names
            and sub.func.attr in ("append", "extend", "insert")
        ):
            found.extend(sub.args)
    return found


def _item(value: ast.AST, index: str | None) -> ast.AST:
    """The expression of item *index* when *value* is a list literal (or a container built from one)."""
    if index is None or not index.isdigit():
        return value
    if isinstance(value, ast.Call) and len(value.args) == 1 and not value.keywords:
        value = value.args[0]
    literal = isinstance(value, (ast.List, ast.Tuple)) and not any(
        isinstance(e, ast.Starred) for e in value.elts
    )
    return value.elts[int(index)] if literal and int(index) < len(value.elts) else value  # type: ignore[attr-defined]


@functools.cache
def _assigned_sites(owner: type, attribute: str, index: str | None) -> frozenset[Site]:
    """The repetitions behind ``self.<attribute> = ...`` in *owner*'s methods (item *index* of it, when given)."""
    found: set[Site] = set()
    for klass in owner.__mro__:
        module = klass.__module__.partition(".")[0]
        if module in ("builtins", "mindspore"):
            continue
        methods = sorted(vars(klass).items(), key=lambda item: item[0] != "__init__")
        for _, member in methods:
            function = _user_function(member)
            source = _source(function) if function is not None else None
            if function is None or source is None:
                continue
            arguments = [*source.node.args.posonlyargs, *source.node.args.args]  # type: ignore[attr-defined]
            me = arguments[0].arg if arguments else None
            values = [
                _item(sub.value, index)
                for sub in ast.walk(source.node)
                if isinstance(sub, (ast.Assign, ast.AnnAssign))
                and sub.value is not None
                and any(
                    isinstance(t, ast.Attribute)
                    and isinstance(t.value, ast.Name)
                    and t.value.id == me
                    and t.attr == attribute
                    for t in (sub.targets if isinstance(sub, ast.Assign) else [sub.target])
                )
            ]
            if not values:
                continue
            nodes, names = list(values), set()
            # `layers = [down] + blocks` after `blocks = [block] * 3`: the locals the locals are given
            for _ in range(_DEPTH):
                more = {
                    n.id for v in nodes for n in ast.walk(v) if isinstance(n, ast.Name) and n.id != me
                } - names
                if not more:
                    break
                names |= more
                nodes = values + _local_values(source.node, names)
            here = _repetitions(source, nodes, f"{function.__qualname__}()")
            if not here:
                seen: set[Any] = set()
                for callee in _callees(function, nodes, klass, me):
                    here |= _helper_sites(callee, _DEPTH, seen)
            found |= here
        if found:
            break
    return frozenset(found)


def _site(ctx: AuditContext, container: str) -> Site | None:
    """The one repetition in the user's code that built *container* (a cell node), ``None`` when unsure.

    The container's own class when the user wrote it (``class Stage(nn.SequentialCell)``);
    else the nearest cell above it that is not a container, and the line of its methods
    that assigns the attribute leading to it, followed into the helpers that line calls.
    """
    cells, by_path = ctx.structure.cells, g.cell_nodes_by_path(ctx.graph)
    own = _user_function(getattr(type(cells[container]), "__init__", None))
    found = frozenset(_helper_sites(own, 1, set())) if own is not None else frozenset()
    path = ctx.graph.nodes[container]["path"]
    parts = path.split(".") if path else []
    for depth in range(len(parts), 0, -1):  # the nearest cell above that is not a container
        owner = by_path.get(".".join(parts[: depth - 1]))
        if found or owner is None or is_container(cells[owner]):
            continue
        rest = parts[depth:]
        found = _assigned_sites(type(cells[owner]), parts[depth - 1], rest[0] if len(rest) == 1 else None)
        break
    return next(iter(found)) if len(found) == 1 else None


@dataclass(frozen=True)
class RepeatedCellInContainer(Cause):
    """One cell object in several slots of each of these containers, made by one line of code (or one loop)."""

    holders: tuple[str, ...]  # the containers' paths
    holder_class: str  # the class of the first container
    classes: tuple[str, ...]  # the classes of the repeated cells, each once
    slots: tuple[int, ...]  # how many slots the repeated cell fills, each count once, sorted
    paths: tuple[str, ...]  # the first container's slots, by path
    site_code: str  # the repetition that made them ("[block] * 3"), "" when no one line can be told
    site_where: str  # the function it is in ("Stage.__init__()")
    site_file: str  # its file's name
    site_line: int  # its line

    @property
    def names_subjects(self) -> bool:  # type: ignore[override]
        # The subjects are the slots, the first container's first: its slots are all named.
        return len(self.holders) == 1 or len(self.paths) >= 4

    def message(self) -> str:
        what = f"one {self.classes[0]} object" if len(self.classes) == 1 else "one cell object"
        slots = f"{self.slots[0]}" if len(self.slots) == 1 else f"{self.slots[0]}-{self.slots[-1]}"
        site = f"`{self.site_code}` in {self.site_where} ({self.site_file}:{self.site_line})"
        made = f"{site} repeats one cell object" if self.site_code else ""
        if len(self.holders) == 1:
            return (
                f"{self.holders[0]} ({self.holder_class}) holds {what} in {slots} slots "
                f"({', '.join(self.paths)}){f': {made}, so' if made else ':'} they share one set of weights."
            )
        holders = listing(self.holders)
        containers = holders if len(self.holders) <= 4 else f"{len(self.holders)} containers ({holders})"
        return (
            f"{containers} each hold {what} in {slots} slots (the first in {', '.join(self.paths)}): "
            f"{f'{made}, so ' if made else ''}the slots of each share one set of weights."
        )

    def fix(self) -> str:
        name = self.classes[0] if len(self.classes) == 1 else "Block"
        where = f" in {self.site_where} ({self.site_file}:{self.site_line})" if self.site_code else ""
        paths = list(self.paths)
        spec = f"[{paths!r}]" if len(self.holders) == 1 else f"[{paths!r}, ...] (one list per container)"
        return (
            f"Create a separate {name} for each slot{where}, e.g. nn.SequentialCell([{name}(...) for _ in "
            f"range({self.slots[-1]})]); if the sharing is meant, declare it: Spec(shared_cells={spec})."
        )


@register(
    "GA101",
    "repeated-cell-in-container",
    severity="error",
    uses=(DeclaredDesign,),
    causes=(RepeatedCellInContainer,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """The same Cell object placed in several slots of a container.

    What it does:
        Finds a cell object (with parameters) that a ``SequentialCell``, ``CellList`` or
        ``CellDict`` holds in more than one slot. The containers whose repetition one line
        makes (``[block] * depth`` in a helper that builds every stage, read from the source
        of the classes and helpers that build them) are one finding naming that line, and so
        are the containers built alike at the paths of one loop (``blocks.*.body``) when no
        line can be told.

    Why is this bad:
        ``nn.SequentialCell([block] * 3)`` does not make three blocks: it puts one block object
        in three slots, so the three "layers" share one set of weights and the network has a
        third of the capacity its author meant. Nothing fails; the model just trains worse.

    Example:
        ```python
        block = Block()
        body = nn.SequentialCell([block] * 3)
        ```

    Use instead:
        ```python
        body = nn.SequentialCell([Block() for _ in range(3)])
        ```

        If the repetition is intended (a recurrent block, an ALBERT-style shared layer),
        declare it in the design: ``Spec(shared_cells=[["body.0", "body.1", "body.2"]])``.
    """
    causes: dict[Any, list[tuple[str, str, list[str], Site | None]]] = {}
    for parent, attrs in g.nodes_of_kind(ctx.graph, g.CELL):
        if not is_container(ctx.structure.cells[parent]):
            continue
        slots: dict[str, list[str]] = {}
        for _, child, edge in ctx.graph.out_edges(parent, data=True):
            if edge["kind"] == g.CONTAINS:
                slots.setdefault(child, []).append(edge["name"])
        built = None
        for child, names in slots.items():
            if len(names) < 2 or not holds_parameters(ctx.graph, child):
                continue
            prefix = f"{attrs['path']}." if attrs["path"] else ""
            paths = [prefix + name for name in names]
            if all(ctx.spec.declares_shared_cell(path) for path in paths):
                continue
            built = built or [_site(ctx, parent)]
            site = built[0]
            if site is not None and site.times not in (None, len(names)):
                site = None  # `[block] * 3` cannot have put it in another number of slots
            # One line repeating in every container it builds, or (no line told) one loop's containers: one cause.
            class_name = ctx.graph.nodes[child]["class_name"]
            key = site or (pattern(ctx.cell_path(parent)), class_name, len(names))
            causes.setdefault(key, []).append((parent, child, paths, site))
    for found in causes.values():
        yield _finding(ctx, found)


def _finding(ctx: AuditContext, found: list[tuple[str, str, list[str], Site | None]]) -> Finding:
    parent, _, paths, site = found[0]
    cause = RepeatedCellInContainer(
        tuple(ctx.cell_path(p) for p, _, _, _ in found),
        ctx.graph.nodes[parent]["class_name"],
        tuple(dict.fromkeys(ctx.graph.nodes[c]["class_name"] for _, c, _, _ in found)),
        tuple(sorted({len(ps) for _, _, ps, _ in found})),
        tuple(paths),
        site.code if site is not None else "",
        site.where if site is not None else "",
        os.path.basename(site.file) if site is not None else "",
        site.line if site is not None else 0,
    )
    return ctx.finding(
        "error",
        paths[0] if len(found) == 1 else holder([p for _, _, ps, _ in found for p in ps]),
        cause,
        [n for p, c, _, _ in found for n in (c, p)],
        subjects=[p for _, _, ps, _ in found for p in ps],
    )

"""Where the user's code repeats one cell in a container: the line, read from the source (GA101).

``[block] * depth`` in a ``stage()`` helper that builds every stage, or a list of one object
built in a loop: :func:`assigned_sites` reads the methods of the class that assigns the
attribute holding the container, and :func:`helper_sites` the helpers they call (a few deep),
for the line that made the repetition. Library code (MindSpore's, the standard library's) is
never read.
"""

from __future__ import annotations

import ast
import functools
import inspect
import os
import sysconfig
import textwrap
import types
from dataclasses import dataclass
from typing import Any

__all__ = ["Site", "assigned_sites", "helper_sites", "user_function"]

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


def user_function(obj: Any) -> types.FunctionType | None:
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
            if (helper := user_function(target)) is not None:
                found.append(helper)
    return list(dict.fromkeys(found))


def helper_sites(function: types.FunctionType, depth: int, seen: set[Any]) -> set[Site]:
    """The repetitions in a helper, or (none there) in the helpers it calls."""
    if function in seen or (source := _source(function)) is None:
        return set()
    seen.add(function)
    found = _repetitions(source, [source.node], f"{function.__qualname__}()")
    if not found and depth > 1:
        for callee in _callees(function, [source.node], None, None):
            found |= helper_sites(callee, depth - 1, seen)
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
def assigned_sites(owner: type, attribute: str, index: str | None) -> frozenset[Site]:
    """The repetitions behind ``self.<attribute> = ...`` in *owner*'s methods (item *index* of it, when given)."""
    found: set[Site] = set()
    for klass in owner.__mro__:
        module = klass.__module__.partition(".")[0]
        if module in ("builtins", "mindspore"):
            continue
        methods = sorted(vars(klass).items(), key=lambda item: item[0] != "__init__")
        for _, member in methods:
            function = user_function(member)
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
                    here |= helper_sites(callee, _DEPTH, seen)
            found |= here
        if found:
            break
    return frozenset(found)

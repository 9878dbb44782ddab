"""Which cell and which source line a GRAPH_MODE compile failure comes from.

MindSpore's "Traceback of Net Construct Code" points at a line of a ``construct``; when a
sub-cell's own ``construct`` cannot be parsed (``Unsupported statement 'Try'``), it points
at the *call* of that sub-cell in its parent (``return self.head(self.block(x))``, the span
``self.block``). :func:`locate` starts from the innermost frame of the user's code, follows
such a span to the sub-cell it names, and finds in that sub-cell's code (or its
descendants') the statement of the kind MindSpore names. Read from the source with
``inspect`` and ``ast``; nothing runs.

Example:
    >>> from mindspore import nn
    >>> cell_at({"cell:": nn.Dense(2, 2)}, None, None) is None
    True
"""

from __future__ import annotations

import ast
import inspect
import os
import re
import textwrap
from typing import Any

from graphaudit.capture.compilation.jit import python_function

__all__ = ["Located", "cell_at", "locate"]

Located = tuple[str | None, str | None, int | None, str]  # cell node, file, line, code
_SPAN = re.compile(r"self((?:\.\w+|\[\d+\])+)")
_UNSUPPORTED = re.compile(r"Unsupported (?:statement|expression) '(\w+)'")


def _span_of(kind: type) -> tuple[str, int, int] | None:
    """The file and the lines of the methods *kind* defines (read from their code: works for classes
    of a file loaded by path, which ``inspect.getsourcelines(kind)`` cannot find)."""
    spans = []
    for value in vars(kind).values():
        function = python_function(getattr(value, "__func__", value))
        code = getattr(function, "__code__", None)
        if code is None:
            continue
        try:
            lines, first = inspect.getsourcelines(function)
        except (OSError, TypeError):
            continue
        spans.append((os.path.abspath(code.co_filename), first, first + len(lines) - 1))
    if not spans:
        return None
    return spans[0][0], min(s[1] for s in spans), max(s[2] for s in spans)


def cell_at(cells: dict[str, Any], path: str | None, line: int | None) -> str | None:
    """The node of the cell whose class's source spans *path*:*line* (the innermost class first)."""
    if path is None or line is None:
        return None
    best: tuple[int, str] | None = None
    spans: dict[type, tuple[str, int, int] | None] = {}
    for node, cell in cells.items():
        kind = type(cell)
        if kind not in spans:
            spans[kind] = _span_of(kind)
        span = spans[kind]
        if span is None or span[0] != os.path.abspath(path) or not span[1] <= line <= span[2]:
            continue
        if best is None or span[2] - span[1] < best[0]:
            best = (span[2] - span[1], node)
    return best[1] if best is not None else None


def _resolve(cell: Any, path: str) -> Any:
    for attribute, index in re.findall(r"\.(\w+)|\[(\d+)\]", path):
        try:
            cell = getattr(cell, attribute) if attribute else cell[int(index)]
        except (AttributeError, IndexError, KeyError, TypeError):
            return None
    return cell


def _statement(cell: Any, kind: str | None) -> tuple[str, int, str] | None:
    """Where *cell*'s ``construct`` holds a node of ast class *kind* (else its ``def`` line)."""
    construct = python_function(getattr(type(cell), "construct", None))
    try:
        source, first = inspect.getsourcelines(construct)
        path = os.path.abspath(construct.__code__.co_filename)
    except (OSError, TypeError):
        return None
    if kind is None:
        return path, first, source[0].strip()
    try:
        tree = ast.parse(textwrap.dedent("".join(source)))
    except SyntaxError:
        return None
    for node in ast.walk(tree):
        if type(node).__name__ == kind:
            line = first + node.lineno - 1  # type: ignore[attr-defined]
            return path, line, source[node.lineno - 1].strip()  # type: ignore[attr-defined]
    return None


def locate(
    cells: dict[str, Any], path: str | None, line: int | None, code: str, span: str, summary: str
) -> Located:
    """The cell node, file, line and code a compile failure comes from (see the module docstring)."""
    node = cell_at(cells, path, line)
    if node is None:
        return None, path, line, code
    match = _SPAN.fullmatch(span.strip())
    sub = _resolve(cells[node], match.group(1)) if match else None
    by_id = {id(cell): n for n, cell in cells.items()}
    if sub is None or id(sub) not in by_id:
        return node, path, line, code
    kind = _UNSUPPORTED.search(summary)
    wanted = kind.group(1) if kind else None
    for _, inner in sub.cells_and_names():
        found = _statement(inner, wanted)
        if found is not None and id(inner) in by_id:
            return by_id[id(inner)], *found
    return by_id[id(sub)], path, line, code

"""Where a key or an array element is in a TOML document: the lines of spec errors.

``tomllib`` gives line numbers for syntax errors only; a spec error (a wrong type, an unknown
key, a malformed glob in the third element of a multi-line array) must name the line too.
:class:`Locator` scans the text once for table headers and ``key = value`` lines (strings
and comments skipped) and finds the line of any key path on demand.

Example:
    >>> locate = Locator('[connections]\\nexpected = [\\n    ["stem", "body"],\\n    ["body"],\\n]\\n')
    >>> locate.line_of(("connections", "expected", 1))
    4
"""

from __future__ import annotations

import re
import sys
from collections.abc import Sequence
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["BARE_KEY", "KeyPath", "Locator"]

KeyPath = Sequence[Any]  #: key names and array indices: ``("connections", "expected", 1)``

BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")  #: a TOML key that needs no quotes
_BASIC_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL_STRING = re.compile(r"'[^'\n]*'")


def _parse_key(text: str, i: int) -> tuple[tuple[str, ...], int] | None:
    """A (dotted) TOML key starting at *text[i]*: its parts and the index after it."""
    parts: list[str] = []
    n = len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return None
        match = _BASIC_STRING.match(text, i) or _LITERAL_STRING.match(text, i) or BARE_KEY.match(text, i)
        if match is None:
            return None
        token = match.group()
        if token[0] == '"':
            try:
                token = tomllib.loads(f"k = {token}")["k"]
            except tomllib.TOMLDecodeError:
                return None
        elif token[0] == "'":
            token = token[1:-1]
        parts.append(token)
        i = match.end()
        while i < n and text[i] in " \t":
            i += 1
        if i < n and text[i] == ".":
            i += 1
            continue
        return tuple(parts), i


def _bracket_depth(text: str, depth: int) -> int:
    """Nesting depth of ``[]``/``{}`` after scanning *text* (strings and comments skipped)."""
    i, n = 0, len(text)
    while i < n:
        char = text[i]
        if char == "#":
            break
        if char in "\"'":
            pattern = _BASIC_STRING if char == '"' else _LITERAL_STRING
            match = pattern.match(text, i)
            i = match.end() if match else n
            continue
        if char in "[{":
            depth += 1
        elif char in "]}":
            depth -= 1
        i += 1
    return depth


class Locator:
    """Finds the line of a key, or of an element of an array value, in a TOML document.

    Example:
        >>> text = '[parameters]\\nfrozen = [\\n    "a",\\n    "b",\\n]\\n'
        >>> locate = Locator(text)
        >>> locate.line_of(("parameters", "frozen")), locate.line_of(("parameters", "frozen", 1))
        (2, 4)
    """

    def __init__(self, text: str) -> None:
        self.lines = text.splitlines()
        # (line, key path, column where the value starts; None for a table header)
        self.entries: list[tuple[int, tuple[Any, ...], int | None]] = []
        table: tuple[Any, ...] = ()
        array_counts: dict[tuple[Any, ...], int] = {}
        depth = 0
        for lineno, line in enumerate(self.lines, 1):
            if depth > 0:  # inside a multi-line array or inline table
                depth = max(_bracket_depth(line, depth), 0)
                continue
            stripped = line.strip()
            if stripped.startswith("[[") and (parsed := _parse_key(stripped, 2)):
                key, end = parsed
                if stripped[end : end + 2] == "]]":
                    index = array_counts.get(key, 0)
                    array_counts[key] = index + 1
                    table = (*key, index)
                    self.entries.append((lineno, table, None))
                    continue
            if stripped.startswith("[") and (parsed := _parse_key(stripped, 1)):
                key, end = parsed
                rest = stripped[end:]
                if rest.startswith("]") and (rest[1:].strip() == "" or rest[1:].lstrip().startswith("#")):
                    table = key
                    self.entries.append((lineno, table, None))
                    continue
            parsed = _parse_key(line, 0)
            if parsed and line[parsed[1] : parsed[1] + 1] == "=":
                key, end = parsed
                self.entries.append((lineno, (*table, *key), end + 1))
                depth = max(_bracket_depth(line[end + 1 :], 0), 0)

    def _elements(self, lineno: int, column: int) -> dict[tuple[int, ...], int]:
        """The line where each element of the array value starting at (lineno, column) starts."""
        found: dict[tuple[int, ...], int] = {}
        stack: list[list[Any]] = []  # [index, expecting an element, is an array]
        for number in range(lineno, len(self.lines) + 1):
            text = self.lines[number - 1]
            i = column if number == lineno else 0
            while i < len(text):
                char = text[i]
                if char == "#":
                    break
                if char in " \t":
                    i += 1
                    continue
                if stack and stack[-1][1] and stack[-1][2] and char not in ",]":
                    found[tuple(level[0] for level in stack if level[2])] = number
                    stack[-1][1] = False
                if char in "\"'":
                    match = (_BASIC_STRING if char == '"' else _LITERAL_STRING).match(text, i)
                    i = match.end() if match else len(text)
                    continue
                if char in "[{":
                    stack.append([0, char == "[", char == "["])
                elif char in "]}":
                    if stack:
                        stack.pop()
                    if not stack:
                        return found
                elif char == "," and stack and stack[-1][2]:
                    stack[-1][0] += 1
                    stack[-1][1] = True
                i += 1
            if not stack:
                return found
        return found

    def line_of(self, path: KeyPath) -> int | None:
        """The line of *path* (key names and array indices), or of its closest ancestor present.

        Example:
            >>> locate = Locator('[calls]\\n"layers.0" = 3\\n')
            >>> locate.line_of(("calls", "layers.0")), locate.line_of(("calls", "head"))
            (2, 1)
            >>> locate.line_of(("parameters",)) is None
            True
        """
        path = tuple(path)
        for lineno, entry, _ in self.entries:  # a table written as dotted keys: its first key
            if len(entry) > len(path) and entry[: len(path)] == path:
                if not any(e == path for _, e, _ in self.entries):
                    return lineno
                break
        for size in range(len(path), 0, -1):
            for lineno, entry, column in self.entries:
                if entry != path[:size]:
                    continue
                rest = path[size:]
                if column is not None and rest and all(isinstance(p, int) for p in rest):
                    elements = self._elements(lineno, column)
                    for keep in range(len(rest), 0, -1):
                        if rest[:keep] in elements:
                            return elements[rest[:keep]]
                return lineno
        return None

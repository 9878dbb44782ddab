"""Declared designs: what a network is meant to share, freeze, connect and call.

A :class:`Spec` states the design; checks compare the captured graph against it. Patterns
are shell-style globs (``fnmatch``): ``backbone.*`` matches every parameter whose name
starts with ``backbone.``.

A spec lives in a TOML file (:meth:`Spec.load`, :meth:`Spec.save`; the layout is in
``docs/spec.md``), can be snapshotted from a network known to be right
(:meth:`Spec.from_net`), and compared with another one (:meth:`Spec.diff`).

Example:
    >>> spec = Spec(frozen=["backbone.*"], shared_parameters=[["embed.embedding_table", "decoder.weight"]])
    >>> spec.is_frozen("backbone.conv.weight"), spec.is_frozen("head.weight")
    (True, False)
    >>> Spec.from_toml(spec.to_toml()) == spec
    True
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, ClassVar, Union

from graphaudit.errors import SpecError
from graphaudit.suggest import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

if TYPE_CHECKING:
    import networkx as nx

__all__ = ["Spec", "escape", "glob_problem", "matches_any"]

PathLike = Union[str, "os.PathLike[str]"]


def matches_any(patterns: Iterable[str], name: str) -> bool:
    """True when *name* matches one of the glob *patterns*.

    Example:
        >>> matches_any(["layer1.*", "fc.bias"], "layer1.0.conv.weight")
        True
    """
    return any(fnmatchcase(name, pattern) for pattern in patterns)


def escape(name: str) -> str:
    """The glob pattern that matches exactly *name* (``*``, ``?`` and ``[`` made literal).

    Example:
        >>> escape("heads[0].weight")
        'heads[[]0].weight'
        >>> matches_any([escape("a*b")], "a*b"), matches_any([escape("a*b")], "axxb")
        (True, False)
    """
    return re.sub(r"([*?\[])", r"[\1]", name)


def _unescape(pattern: str) -> str:
    """Inverse of :func:`escape` (for the exact names a snapshot holds)."""
    return re.sub(r"\[([*?\[])\]", r"\1", pattern)


def glob_problem(pattern: str) -> str | None:
    """What is wrong with a glob *pattern*, or ``None`` when it is well formed.

    Example:
        >>> glob_problem("layers.[0-2].weight") is None
        True
        >>> glob_problem("layers.[0.weight")
        "has an unbalanced '[' at character 8 (write '[[]' to match a literal '[')"
    """
    if pattern == "":
        return "is empty"
    i, n = 0, len(pattern)
    while i < n:
        if pattern[i] == "[":
            j = i + 1
            if j < n and pattern[j] == "!":
                j += 1
            if j < n and pattern[j] == "]":
                j += 1
            while j < n and pattern[j] != "]":
                j += 1
            if j >= n:
                return f"has an unbalanced '[' at character {i + 1} (write '[[]' to match a literal '[')"
            i = j
        i += 1
    return None


# --------------------------------------------------------------------------- TOML writing


def _quote(text: str) -> str:
    """*text* as a TOML basic string."""
    out = ['"']
    for char in text:
        if char == '"':
            out.append('\\"')
        elif char == "\\":
            out.append("\\\\")
        elif char in "\b\t\n\f\r":
            out.append({"\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def _string_list(values: Sequence[str], indent: str = "") -> str:
    items = [_quote(v) for v in values]
    one_line = f"[{', '.join(items)}]"
    if len(one_line) + len(indent) <= 88:
        return one_line
    return "[\n" + "".join(f"{indent}    {item},\n" for item in items) + f"{indent}]"


def _pair_list(pairs: Sequence[tuple[str, str]]) -> str:
    if not pairs:
        return "[]"
    return "[\n" + "".join(f"    [{_quote(a)}, {_quote(b)}],\n" for a, b in pairs) + "]"


# --------------------------------------------------------------------------- TOML reading

_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_BASIC_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"')
_LITERAL_STRING = re.compile(r"'[^'\n]*'")
_SYNTAX_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def _parse_key(text: str, i: int) -> tuple[tuple[str, ...], int] | None:
    """A (dotted) TOML key starting at *text[i]*: its parts and the index after it."""
    parts: list[str] = []
    n = len(text)
    while True:
        while i < n and text[i] in " \t":
            i += 1
        if i >= n:
            return None
        match = _BASIC_STRING.match(text, i) or _LITERAL_STRING.match(text, i) or _BARE_KEY.match(text, i)
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


class _Locator:
    """Finds the line of a key, or of an element of an array value, in a TOML document."""

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

    def line_of(self, path: Sequence[Any]) -> int | None:
        """The line of *path* (key names and array indices), or of its closest ancestor present."""
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


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a table"
    return {str: "a string", int: "an integer", float: "a float", list: "a list"}.get(
        type(value), f"a {type(value).__name__}"
    )


def _dotted(path: Sequence[Any]) -> str:
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            bare = _BARE_KEY.fullmatch(part) is not None
            text += (f".{part}" if text else part) if bare else (f".{_quote(part)}" if text else _quote(part))
    return text


class _Reader:
    """Checks the data of a parsed spec file, raising a :class:`SpecError` with its line."""

    SECTIONS: ClassVar[dict[str, tuple[str, ...]]] = {
        "parameters": ("frozen", "trainable"),
        "shared": ("parameters", "cells"),
        "connections": ("expected", "forbidden", "exhaustive"),
        "calls": (),
    }
    GROUP_KEYS: ClassVar[dict[str, str]] = {"parameters": "names", "cells": "paths"}

    def __init__(self, locate: Callable[[Sequence[Any]], int | None], source: str | None):
        self.locate = locate
        self.source = source

    def fail(self, path: Sequence[Any], problem: str) -> SpecError:
        return SpecError(problem, source=self.source, line=self.locate(path))

    def unknown(self, path: Sequence[Any], key: str, allowed: Sequence[str]) -> SpecError:
        where = f"in [{_dotted(path)}]" if path else "at the top level"
        hint = did_you_mean(key, allowed)
        known = ", ".join(repr(a) for a in allowed)
        return self.fail(
            (*path, key), f"unknown key {key!r} {where}{hint} (the keys allowed there are {known})"
        )

    def table(self, value: Any, path: Sequence[Any], allowed: Sequence[str] | None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(path, f"{_dotted(path)} must be a table, got {_type_name(value)}")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    raise self.unknown(path, key, allowed)
        return value

    def patterns(self, value: Any, path: Sequence[Any], what: str) -> list[str]:
        if not isinstance(value, list):
            example = ' = ["backbone.*"]' if path[-1] in ("frozen", "trainable") else ' = ["a", "b"]'
            raise self.fail(
                path,
                f"{_dotted(path)} must be a list of {what}, got {_type_name(value)}"
                f" (write {path[-1]}{example})",
            )
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise self.fail(
                    (*path, index),
                    f"{_dotted((*path, index))} must be a string ({what}), got {_type_name(item)} {item!r}",
                )
            self.glob(item, (*path, index))
        return list(value)

    def glob(self, pattern: str, path: Sequence[Any]) -> None:
        problem = glob_problem(pattern)
        if problem is not None:
            raise self.fail(path, f"the pattern {pattern!r} in {_dotted(path[:-1])} {problem}")

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        kwargs: dict[str, Any] = {}
        for section in data:
            if section not in self.SECTIONS:
                raise self.unknown((), section, list(self.SECTIONS))
        if "parameters" in data:
            params = self.table(data["parameters"], ("parameters",), self.SECTIONS["parameters"])
            for key in ("frozen", "trainable"):
                if key in params:
                    kwargs[key] = self.patterns(params[key], ("parameters", key), "parameter names or globs")
        if "shared" in data:
            shared = self.table(data["shared"], ("shared",), self.SECTIONS["shared"])
            for key, item_key in self.GROUP_KEYS.items():
                if key in shared:
                    kwargs[f"shared_{key}"] = self.groups(shared[key], ("shared", key), item_key)
        if "connections" in data:
            conns = self.table(data["connections"], ("connections",), self.SECTIONS["connections"])
            for key in ("expected", "forbidden"):
                if key in conns:
                    kwargs[f"{key}_connections"] = self.pairs(conns[key], ("connections", key))
            if "exhaustive" in conns:
                if not isinstance(conns["exhaustive"], bool):
                    raise self.fail(
                        ("connections", "exhaustive"),
                        f"connections.exhaustive must be true or false, got {_type_name(conns['exhaustive'])}",
                    )
                kwargs["exhaustive_connections"] = conns["exhaustive"]
        if "calls" in data:
            kwargs["calls"] = self.calls(self.table(data["calls"], ("calls",), None))
        return kwargs

    def groups(self, value: Any, path: tuple[str, str], item_key: str) -> list[list[str]]:
        header = f"[[{_dotted(path)}]]"
        if not isinstance(value, list):
            raise self.fail(
                path,
                f"{_dotted(path)} must be a list of groups, got {_type_name(value)} "
                f"(write each group as {header} followed by {item_key} = [...])",
            )
        groups = []
        for index, group in enumerate(value):
            if not isinstance(group, dict):
                raise self.fail(
                    path,
                    f"{_dotted((*path, index))} must be a table with {item_key} = [...], got "
                    f"{_type_name(group)} (write each group as {header} followed by {item_key} = [...])",
                )
            self.table(group, (*path, index), (item_key,))
            if item_key not in group:
                raise self.fail(
                    (*path, index), f"the group {header} number {index + 1} has no {item_key} = [...]"
                )
            what = "parameter names or globs" if item_key == "names" else "cell paths or globs"
            names = self.patterns(group[item_key], (*path, index, item_key), what)
            if not names:
                raise self.fail((*path, index, item_key), f"{_dotted((*path, index, item_key))} is empty")
            groups.append(names)
        return groups

    def pairs(self, value: Any, path: tuple[str, str]) -> list[tuple[str, str]]:
        if not isinstance(value, list):
            raise self.fail(
                path,
                f"{_dotted(path)} must be a list of [source, target] pairs, got {_type_name(value)} "
                f'(write {path[-1]} = [["a", "b"]])',
            )
        pairs = []
        for index, pair in enumerate(value):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
                raise self.fail(
                    (*path, index),
                    f"{_dotted((*path, index))} must be a pair [source, target] of cell paths, got {pair!r}",
                )
            for end, pattern in enumerate(pair):
                self.glob(pattern, (*path, index, end))
            pairs.append((pair[0], pair[1]))
        return pairs

    def calls(self, table: dict[str, Any]) -> dict[str, int]:
        calls = {}
        for key, count in table.items():
            path = ("calls", key)
            if isinstance(count, dict):
                raise self.fail(
                    path,
                    f"calls.{key} is a table: a cell path with dots must be quoted, e.g. "
                    f'"{key}.{next(iter(count), "0")}" = 1',
                )
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise self.fail(
                    path,
                    f"the call count of {key!r} must be a non-negative integer, got {_type_name(count)} {count!r}",
                )
            problem = glob_problem(key)
            if problem is not None:
                raise self.fail(path, f"the cell path {key!r} in [calls] {problem}")
            calls[key] = count
        return calls


def _syntax_error(err: tomllib.TOMLDecodeError, text: str, source: str | None) -> SpecError:
    message = str(err)
    match = _SYNTAX_POSITION.search(message)
    if match:
        line, column = int(match.group(1)), int(match.group(2))
        problem = f"TOML syntax error at column {column}: {message[: match.start()]}"
    else:
        line = max(len(text.splitlines()), 1)
        problem = f"TOML syntax error: {message}"
    return SpecError(problem, source=source, line=line)


# --------------------------------------------------------------------------- snapshots


def _holds_parameters(graph: nx.MultiDiGraph, cell: str) -> bool:
    from graphaudit import graph as g

    if graph.nodes[cell]["n_params"] > 0:
        return True
    return any(
        _holds_parameters(graph, child)
        for _, child, data in graph.out_edges(cell, data=True)
        if data["kind"] == g.CONTAINS
    )


def _snapshot(
    graph: nx.MultiDiGraph,
    *,
    depth: int | None,
    connection_paths: Sequence[str] = (),
    call_paths: Sequence[str] = (),
) -> Spec:
    """The design the captured *graph* shows (see :meth:`Spec.from_net`)."""
    from graphaudit import graph as g

    frozen = sorted(d["name"] for _, d in g.nodes_of_kind(graph, g.PARAMETER) if not d["requires_grad"])
    shared_parameters = [
        [escape(p) for p in g.node_paths(graph, node)]
        for node, _ in g.nodes_of_kind(graph, g.PARAMETER)
        if len(g.owners_of(graph, node)) > 1
    ]
    shared_cells = [
        [escape(p) for p in g.node_paths(graph, node)]
        for node, _ in g.nodes_of_kind(graph, g.CELL)
        if len(g.node_paths(graph, node)) > 1 and _holds_parameters(graph, node)
    ]
    spec = Spec(
        frozen=[escape(name) for name in frozen],
        shared_parameters=shared_parameters,
        shared_cells=shared_cells,
    )
    if not graph.graph.get("traced"):
        return spec

    from graphaudit.graph.connectivity import direct_connections

    by_path = g.cell_nodes_by_path(graph)
    # the path each call count is listed under -> its cell node; a cell is listed once,
    # except under each path asked for in *call_paths*
    keyed = {path: by_path[path] for path in call_paths if path in by_path}
    listed = set(keyed.values())

    def note(node: str, path: str) -> None:
        if node not in listed:
            keyed[path] = node
            listed.add(node)

    paths = list(connection_paths)
    if depth is not None:
        level = [p for p in by_path if p and len(p.split(".")) == depth]
        paths += level
        for path in level:
            note(by_path[path], path)
    for node, attrs in g.nodes_of_kind(graph, g.CELL):
        if len(g.calls_of(graph, node)) > 1:
            note(node, attrs["path"])
    paths = list(dict.fromkeys(paths))
    connections = sorted(direct_connections(graph, paths)) if paths else []
    spec.expected_connections = [(escape(a), escape(b)) for a, b in connections]
    spec.exhaustive_connections = True
    spec.calls = {escape(path): len(g.calls_of(graph, node)) for path, node in keyed.items()}
    return spec


def _times(count: int) -> str:
    return f"{count} time{'s' if count != 1 else ''}"


def _group_text(group: Sequence[str]) -> str:
    return "[" + ", ".join(repr(name) for name in group) + "]"


def _diff_groups(what: str, declared: list[list[str]], actual: list[list[str]]) -> list[str]:
    lines = []
    actual = [[_unescape(name) for name in group] for group in actual]
    seen: set[int] = set()
    for group in declared:
        hits = [i for i, members in enumerate(actual) if any(matches_any(group, m) for m in members)]
        seen.update(hits)
        if not hits:
            lines.append(
                f"{what}: {_group_text(group)} are declared shared, but in the network they are "
                "separate objects (the tie is broken)"
            )
            continue
        members = actual[hits[0]]
        exact = (
            len(hits) == 1
            and all(matches_any(group, m) for m in members)
            and all(any(fnmatchcase(m, p) for m in members) for p in group)
        )
        if not exact:
            found = " and ".join(_group_text(actual[i]) for i in hits)
            lines.append(
                f"{what}: {_group_text(group)} are declared shared, but in the network the shared "
                f"group{'s are' if len(hits) > 1 else ' is'} {found}"
            )
    for index, members in enumerate(actual):
        if index not in seen:
            lines.append(
                f"{what}: {_group_text(members)} are shared in the network, but the spec does not declare it"
            )
    return lines


@dataclass
class Spec:
    """A network's declared design.

    - ``frozen`` / ``trainable``: glob patterns on parameter names that must not / must train.
    - ``shared_parameters``: groups of parameter names (or attribute paths) that must be one
      Parameter object (tied weights).
    - ``shared_cells``: groups of cell paths that must be one Cell object.
    - ``expected_connections`` / ``forbidden_connections``: ``(source, target)`` cell paths or
      globs; a connection is a data flow from the source cell into the target cell, directly
      or through functional operations only.
    - ``exhaustive_connections``: when true, every connection between the cells named in
      ``expected_connections`` that is not declared is reported.
    - ``calls``: how many times each cell path is called in one forward pass.
    - ``source``: the file the spec was loaded from, for messages (not compared by ``==``).
    """

    frozen: list[str] = field(default_factory=list)
    trainable: list[str] = field(default_factory=list)
    shared_parameters: list[list[str]] = field(default_factory=list)
    shared_cells: list[list[str]] = field(default_factory=list)
    expected_connections: list[tuple[str, str]] = field(default_factory=list)
    forbidden_connections: list[tuple[str, str]] = field(default_factory=list)
    exhaustive_connections: bool = False
    calls: dict[str, int] = field(default_factory=dict)
    source: str | None = field(default=None, compare=False)

    def is_frozen(self, name: str) -> bool:
        """Whether the design declares parameter *name* frozen."""
        return matches_any(self.frozen, name)

    def is_trainable(self, name: str) -> bool:
        """Whether the design explicitly declares parameter *name* trainable."""
        return matches_any(self.trainable, name)

    def declares_shared_parameter(self, name: str) -> bool:
        """Whether *name* belongs to a declared group of tied parameters."""
        return any(matches_any(group, name) for group in self.shared_parameters)

    def declares_shared_cell(self, path: str) -> bool:
        """Whether cell *path* belongs to a declared group of shared cells."""
        return any(matches_any(group, path) for group in self.shared_cells)

    # ----------------------------------------------------------------------- TOML

    @classmethod
    def from_toml(cls, text: str, source: str | None = None) -> Spec:
        """Parse the TOML form of a spec (see ``docs/spec.md``).

        Raises:
            SpecError: the text is not TOML, or not a spec; the message reads
                ``source:line: problem`` and chains the original error.

        Example:
            >>> spec = Spec.from_toml('[calls]\\n"layers.0" = 3\\n')
            >>> spec.calls
            {'layers.0': 3}
            >>> Spec.from_toml("[parameter]\\nfrozen = []\\n", source="design.toml")
            Traceback (most recent call last):
            ...
            graphaudit.errors.SpecError: design.toml:1: unknown key 'parameter' at the top level; did you mean 'parameters'? (the keys allowed there are 'parameters', 'shared', 'connections', 'calls')
        """
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError as err:
            raise _syntax_error(err, text, source) from err
        locator = _Locator(text)
        return cls(**_Reader(locator.line_of, source).read(data), source=source)

    def validate(self) -> None:
        """Raise a :class:`SpecError` when a field has the wrong type or a malformed glob.

        Example:
            >>> Spec(frozen="backbone.*").validate()
            Traceback (most recent call last):
            ...
            graphaudit.errors.SpecError: <spec>: parameters.frozen must be a list of parameter names or globs, got a string (write frozen = ["backbone.*"])
        """
        _Reader(lambda path: None, self.source).read(self._data())

    def _data(self) -> dict[str, Any]:
        def listed(value: Any) -> Any:
            if isinstance(value, (list, tuple)):
                return [list(v) if isinstance(v, tuple) else v for v in value]
            return value

        def groups(value: Any, key: str) -> Any:
            return [{key: listed(g)} for g in value] if isinstance(value, (list, tuple)) else value

        return {
            "parameters": {"frozen": listed(self.frozen), "trainable": listed(self.trainable)},
            "shared": {
                "parameters": groups(self.shared_parameters, "names"),
                "cells": groups(self.shared_cells, "paths"),
            },
            "connections": {
                "expected": listed(self.expected_connections),
                "forbidden": listed(self.forbidden_connections),
                "exhaustive": self.exhaustive_connections,
            },
            "calls": self.calls,
        }

    def to_toml(self) -> str:
        """The TOML form of the spec; ``Spec.from_toml(spec.to_toml()) == spec``.

        Example:
            >>> print(Spec(frozen=["backbone.*"], calls={"layers.0": 3}).to_toml())
            # graphaudit design spec (see docs/spec.md)
            <BLANKLINE>
            [parameters]
            frozen = ["backbone.*"]
            trainable = []
            <BLANKLINE>
            [connections]
            expected = []
            forbidden = []
            exhaustive = false
            <BLANKLINE>
            [calls]
            "layers.0" = 3
            <BLANKLINE>
        """
        self.validate()
        out = ["# graphaudit design spec (see docs/spec.md)", ""]
        out += ["[parameters]", f"frozen = {_string_list(self.frozen)}"]
        out += [f"trainable = {_string_list(self.trainable)}", ""]
        for table, key, groups in (
            ("shared.parameters", "names", self.shared_parameters),
            ("shared.cells", "paths", self.shared_cells),
        ):
            for group in groups:
                out += [f"[[{table}]]", f"{key} = {_string_list(group)}", ""]
        out += ["[connections]", f"expected = {_pair_list(self.expected_connections)}"]
        out += [f"forbidden = {_pair_list(self.forbidden_connections)}"]
        out += [f"exhaustive = {'true' if self.exhaustive_connections else 'false'}", ""]
        out += ["[calls]"]
        out += [f"{_quote(path)} = {count}" for path, count in self.calls.items()]
        return "\n".join(out) + "\n"

    @classmethod
    def load(cls, path: PathLike) -> Spec:
        """Read a spec from a TOML file (UTF-8); ``source`` is set to *path*.

        Raises:
            SpecError: the file cannot be read, or is not a valid spec (``file:line: problem``).
        """
        source = os.fspath(path)
        try:
            with open(source, encoding="utf-8") as file:
                text = file.read()
        except (OSError, UnicodeDecodeError) as err:
            raise SpecError(f"cannot read the spec file: {err}", source=source) from err
        return cls.from_toml(text, source=source)

    def save(self, path: PathLike) -> None:
        """Write the spec to *path* as TOML (UTF-8), creating the parent folders."""
        target = os.fspath(path)
        text = self.to_toml()
        parent = os.path.dirname(target)
        if parent:
            os.makedirs(parent, exist_ok=True)
        with open(target, "w", encoding="utf-8", newline="\n") as file:
            file.write(text)

    # ----------------------------------------------------------------------- snapshots

    @classmethod
    def from_net(cls, net: Any, inputs: Any = None, *, depth: int = 1) -> Spec:
        """Snapshot the design of a network known to be right.

        - ``frozen``: the exact names of the parameters with ``requires_grad=False``;
        - ``shared_parameters``: every path of each parameter held by more than one cell;
        - ``shared_cells``: every path of each cell (holding parameters) reachable under
          more than one path;
        - with *inputs* (one forward pass is traced): the direct connections among the cells
          *depth* levels down (``depth=1``: the network's children), declared exhaustive,
          and the call counts of those cells and of every cell called more than once.

        Names are stored as exact-match patterns (see :func:`escape`).

        Example:
            >>> import numpy as np
            >>> from mindspore import nn, Tensor
            >>> block = nn.Dense(4, 4)
            >>> spec = Spec.from_net(nn.SequentialCell([block] * 3), Tensor(np.ones((1, 4), np.float32)))
            >>> spec.shared_cells, spec.calls
            ([['0', '1', '2']], {'0': 3})
        """
        from graphaudit.capture import capture

        if isinstance(depth, bool) or not isinstance(depth, int) or depth < 1:
            raise SpecError(f"from_net() needs depth >= 1 (1: the network's children), got {depth!r}")
        graph = capture(net, inputs)[0]
        return _snapshot(graph, depth=depth)

    def diff(self, other: Spec) -> list[str]:
        """How the observed design *other* (usually ``Spec.from_net(...)``) departs from this one.

        ``self`` is the declared design (patterns allowed); *other* holds exact names, as a
        snapshot does. Returns one readable line per difference, empty when they agree.

        Example:
            >>> declared = Spec(shared_parameters=[["embed.embedding_table", "decoder.weight"]])
            >>> declared.diff(Spec())
            ["shared parameters: ['embed.embedding_table', 'decoder.weight'] are declared shared, but in the network they are separate objects (the tie is broken)"]
        """
        return self._diff(other)

    def _diff(self, other: Spec, trainable: Iterable[str] = ()) -> list[str]:
        lines: list[str] = []
        frozen = [_unescape(name) for name in other.frozen]
        for name in frozen:
            if self.is_frozen(name):
                continue
            if self.is_trainable(name):
                lines.append(
                    f"frozen: {name!r} is frozen (requires_grad=False), but the spec declares it trainable"
                )
            else:
                lines.append(
                    f"frozen: {name!r} is frozen (requires_grad=False), but the spec does not declare it frozen"
                )
        for name in trainable:
            if self.is_frozen(name) and not self.is_trainable(name):
                lines.append(
                    f"frozen: {name!r} is trainable (requires_grad=True), but the spec declares it frozen"
                )
        for pattern in self.frozen:
            if not any(fnmatchcase(name, pattern) for name in frozen) and not any(
                fnmatchcase(name, pattern) for name in trainable
            ):
                lines.append(
                    f"frozen: the spec declares {pattern!r} frozen, but no frozen parameter matches it"
                )
        lines += _diff_groups("shared parameters", self.shared_parameters, other.shared_parameters)
        lines += _diff_groups("shared cells", self.shared_cells, other.shared_cells)
        lines += self._diff_connections(other)
        lines += self._diff_calls(other)
        return lines

    def _diff_connections(self, other: Spec) -> list[str]:
        lines = []
        actual = [(_unescape(a), _unescape(b)) for a, b in other.expected_connections]

        def matching(source: str, target: str) -> list[tuple[str, str]]:
            return [(a, b) for a, b in actual if fnmatchcase(a, source) and fnmatchcase(b, target)]

        for source, target in self.expected_connections:
            if not matching(source, target):
                lines.append(
                    f"connections: {source} -> {target} is expected, but the network has no such connection"
                )
        for source, target in self.forbidden_connections:
            for a, b in matching(source, target):
                rule = "" if (a, b) == (source, target) else f" (matches {source} -> {target})"
                lines.append(f"connections: {a} -> {b} is in the network, but the spec forbids it{rule}")
        if self.exhaustive_connections:
            named = {p for pair in self.expected_connections for p in pair}
            for a, b in actual:
                if (
                    matches_any(named, a)
                    and matches_any(named, b)
                    and not any(
                        fnmatchcase(a, s) and fnmatchcase(b, t)
                        for s, t in (*self.expected_connections, *self.forbidden_connections)
                    )
                ):
                    lines.append(
                        f"connections: {a} -> {b} is in the network, but the spec does not declare it "
                        "(its connections are exhaustive)"
                    )
        return lines

    def _diff_calls(self, other: Spec) -> list[str]:
        lines = []
        actual = {_unescape(path): count for path, count in other.calls.items()}
        covered: set[str] = set()
        for pattern, count in self.calls.items():
            hits = [path for path in actual if fnmatchcase(path, pattern)]
            if not hits:
                lines.append(
                    f"calls: the spec says {pattern!r} is called {_times(count)}, but the network has "
                    "no such cell (or the forward pass was not traced)"
                )
            for path in hits:
                if actual[path] != count:
                    lines.append(
                        f"calls: {path!r} is called {_times(actual[path])} in one forward pass, "
                        f"but the spec says {count}"
                    )
            covered.update(hits)
        for path, count in actual.items():
            if path not in covered and count > 1:
                lines.append(
                    f"calls: {path!r} is called {_times(count)} in one forward pass, but the spec does not declare it"
                )
        return lines

"""Reading a spec file: TOML data checked field by field, every error with its ``file:line:``.

:func:`read_toml` parses the text with ``tomllib``, then :class:`Reader` checks the data
(known sections and keys, value types, well-formed globs) and turns it into the keyword
arguments of :class:`~graphaudit.spec.Spec`. ``tomllib`` gives no line numbers for values,
so :class:`~graphaudit.spec.toml_locate.Locator` finds them in the text: the line of a key, or
of an element inside a multi-line array. Every problem is a :class:`~graphaudit.errors.SpecError` that reads
``source:line: problem``, with a "did you mean" for a misspelt key
(:func:`graphaudit.suggest.did_you_mean`).

Example:
    >>> read_toml('[parameters]\\nfrozen = ["backbone.*"]\\n')
    {'frozen': ['backbone.*']}
    >>> read_toml('[connections]\\nexhaustiv = true\\n', source="design.toml")
    Traceback (most recent call last):
    ...
    graphaudit.errors.SpecError: design.toml:2: unknown key 'exhaustiv' in [connections]; did you mean 'exhaustive'? (the keys allowed there are 'expected', 'forbidden', 'exhaustive', 'linear')
"""

from __future__ import annotations

import re
import sys
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from graphaudit.errors import SpecError
from graphaudit.spec.patterns import glob_problem
from graphaudit.spec.toml_locate import BARE_KEY, KeyPath, Locator
from graphaudit.spec.toml_write import quote
from graphaudit.suggest import did_you_mean

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python < 3.11 only
    import tomli as tomllib

__all__ = ["Reader", "read_toml"]

_SYNTAX_POSITION = re.compile(r"\s*\(at line (\d+), column (\d+)\)\s*$")


def read_toml(text: str, source: str | None = None) -> dict[str, Any]:
    """The keyword arguments of ``Spec`` that the TOML *text* declares.

    Raises:
        SpecError: the text is not TOML (chaining the ``tomllib.TOMLDecodeError``), or not a
            spec; the message reads ``source:line: problem``.

    Example:
        >>> read_toml('[calls]\\n"layers.0" = 3\\n')
        {'calls': {'layers.0': 3}}
        >>> try:
        ...     read_toml('[calls]\\n"a" = 1\\n"a" = 2\\n', source="x.toml")
        ... except SpecError as err:
        ...     print(err.source, err.line, err.problem.split(":")[0], type(err.__cause__).__name__)
        x.toml 3 TOML syntax error at column 8 TOMLDecodeError
    """
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as err:
        raise _syntax_error(err, text, source) from err
    return Reader(Locator(text).line_of, source).read(data)


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


# --------------------------------------------------------------------------- checking the data


def _type_name(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a table"
    return {str: "a string", int: "an integer", float: "a float", list: "a list"}.get(
        type(value), f"a {type(value).__name__}"
    )


def _dotted(path: KeyPath) -> str:
    """*path* written as a TOML key: ``connections.expected[1]``, ``calls."layers.0"``."""
    text = ""
    for part in path:
        if isinstance(part, int):
            text += f"[{part}]"
        else:
            key = part if BARE_KEY.fullmatch(part) else quote(part)
            text += f".{key}" if text else key
    return text


class Reader:
    """Checks the data of a parsed spec file, raising a :class:`SpecError` with its line.

    *locate* gives the line of a key path (:meth:`~graphaudit.spec.toml_locate.Locator.line_of`),
    or ``None`` for a spec
    built in Python; *source* names the file in messages.

    Example:
        >>> Reader(lambda path: None, None).read({"calls": {"head": 1}})
        {'calls': {'head': 1}}
        >>> Reader(lambda path: 7, "d.toml").read({"calls": {"head": -1}})
        Traceback (most recent call last):
        ...
        graphaudit.errors.SpecError: d.toml:7: the call count of 'head' must be a non-negative integer, got an integer -1
    """

    SECTIONS: ClassVar[dict[str, tuple[str, ...]]] = {
        "parameters": ("frozen", "trainable"),
        "shared": ("parameters", "cells"),
        "connections": ("expected", "forbidden", "exhaustive", "linear"),
        "calls": (),
        "model": ("causal",),
    }
    GROUP_KEYS: ClassVar[dict[str, str]] = {"parameters": "names", "cells": "paths"}

    def __init__(self, locate: Callable[[KeyPath], int | None], source: str | None) -> None:
        self.locate = locate
        self.source = source

    def read(self, data: dict[str, Any]) -> dict[str, Any]:
        """The ``Spec`` keyword arguments *data* (parsed TOML) declares, once checked.

        Example:
            >>> Reader(lambda path: None, None).read({"connections": {"expected": [["a", "b"]]}})
            {'expected_connections': [('a', 'b')]}
        """
        kwargs: dict[str, Any] = {}
        for section in data:
            if section not in self.SECTIONS:
                raise self._unknown((), section, list(self.SECTIONS))
        if "parameters" in data:
            params = self._table(data["parameters"], ("parameters",), self.SECTIONS["parameters"])
            for key in ("frozen", "trainable"):
                if key in params:
                    kwargs[key] = self._patterns(params[key], ("parameters", key), "parameter names or globs")
        if "shared" in data:
            shared = self._table(data["shared"], ("shared",), self.SECTIONS["shared"])
            for key, item_key in self.GROUP_KEYS.items():
                if key in shared:
                    kwargs[f"shared_{key}"] = self._groups(shared[key], ("shared", key), item_key)
        if "connections" in data:
            conns = self._table(data["connections"], ("connections",), self.SECTIONS["connections"])
            for key in ("expected", "forbidden", "linear"):
                if key in conns:
                    kwargs[f"{key}_connections"] = self._pairs(conns[key], ("connections", key))
            if "exhaustive" in conns:
                if not isinstance(conns["exhaustive"], bool):
                    raise self._fail(
                        ("connections", "exhaustive"),
                        f"connections.exhaustive must be true or false, got {_type_name(conns['exhaustive'])}",
                    )
                kwargs["exhaustive_connections"] = conns["exhaustive"]
        if "calls" in data:
            kwargs["calls"] = self._calls(self._table(data["calls"], ("calls",), None))
        if "model" in data:
            model = self._table(data["model"], ("model",), self.SECTIONS["model"])
            if "causal" in model:
                if not isinstance(model["causal"], bool):
                    raise self._fail(
                        ("model", "causal"),
                        f"model.causal must be true or false, got {_type_name(model['causal'])}",
                    )
                kwargs["causal"] = model["causal"]
        return kwargs

    def _fail(self, path: KeyPath, problem: str) -> SpecError:
        return SpecError(problem, source=self.source, line=self.locate(path))

    def _unknown(self, path: KeyPath, key: str, allowed: Sequence[str]) -> SpecError:
        where = f"in [{_dotted(path)}]" if path else "at the top level"
        hint = did_you_mean(key, allowed)
        known = ", ".join(repr(a) for a in allowed)
        return self._fail(
            (*path, key), f"unknown key {key!r} {where}{hint} (the keys allowed there are {known})"
        )

    def _table(self, value: Any, path: KeyPath, allowed: Sequence[str] | None) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self._fail(path, f"{_dotted(path)} must be a table, got {_type_name(value)}")
        if allowed is not None:
            for key in value:
                if key not in allowed:
                    raise self._unknown(path, key, allowed)
        return value

    def _patterns(self, value: Any, path: KeyPath, what: str) -> list[str]:
        if not isinstance(value, list):
            example = ' = ["backbone.*"]' if path[-1] in ("frozen", "trainable") else ' = ["a", "b"]'
            raise self._fail(
                path,
                f"{_dotted(path)} must be a list of {what}, got {_type_name(value)}"
                f" (write {path[-1]}{example})",
            )
        for index, item in enumerate(value):
            if not isinstance(item, str):
                raise self._fail(
                    (*path, index),
                    f"{_dotted((*path, index))} must be a string ({what}), got {_type_name(item)} {item!r}",
                )
            self._glob(item, (*path, index))
        return list(value)

    def _glob(self, pattern: str, path: KeyPath) -> None:
        problem = glob_problem(pattern)
        if problem is not None:
            raise self._fail(path, f"the pattern {pattern!r} in {_dotted(path[:-1])} {problem}")

    def _groups(self, value: Any, path: tuple[str, str], item_key: str) -> list[list[str]]:
        header = f"[[{_dotted(path)}]]"
        if not isinstance(value, list):
            raise self._fail(
                path,
                f"{_dotted(path)} must be a list of groups, got {_type_name(value)} "
                f"(write each group as {header} followed by {item_key} = [...])",
            )
        groups = []
        for index, group in enumerate(value):
            if not isinstance(group, dict):
                raise self._fail(
                    path,
                    f"{_dotted((*path, index))} must be a table with {item_key} = [...], got "
                    f"{_type_name(group)} (write each group as {header} followed by {item_key} = [...])",
                )
            self._table(group, (*path, index), (item_key,))
            if item_key not in group:
                raise self._fail(
                    (*path, index), f"the group {header} number {index + 1} has no {item_key} = [...]"
                )
            what = "parameter names or globs" if item_key == "names" else "cell paths or globs"
            names = self._patterns(group[item_key], (*path, index, item_key), what)
            if not names:
                raise self._fail((*path, index, item_key), f"{_dotted((*path, index, item_key))} is empty")
            groups.append(names)
        return groups

    def _pairs(self, value: Any, path: tuple[str, str]) -> list[tuple[str, str]]:
        if not isinstance(value, list):
            raise self._fail(
                path,
                f"{_dotted(path)} must be a list of [source, target] pairs, got {_type_name(value)} "
                f'(write {path[-1]} = [["a", "b"]])',
            )
        pairs = []
        for index, pair in enumerate(value):
            if not (isinstance(pair, list) and len(pair) == 2 and all(isinstance(p, str) for p in pair)):
                raise self._fail(
                    (*path, index),
                    f"{_dotted((*path, index))} must be a pair [source, target] of cell paths, got {pair!r}",
                )
            for end, pattern in enumerate(pair):
                self._glob(pattern, (*path, index, end))
            pairs.append((pair[0], pair[1]))
        return pairs

    def _calls(self, table: dict[str, Any]) -> dict[str, int]:
        calls = {}
        for key, count in table.items():
            path = ("calls", key)
            if isinstance(count, dict):
                raise self._fail(
                    path,
                    f"calls.{key} is a table: a cell path with dots must be quoted, e.g. "
                    f'"{key}.{next(iter(count), "0")}" = 1',
                )
            if isinstance(count, bool) or not isinstance(count, int) or count < 0:
                raise self._fail(
                    path,
                    f"the call count of {key!r} must be a non-negative integer, got {_type_name(count)} {count!r}",
                )
            problem = glob_problem(key)
            if problem is not None:
                raise self._fail(path, f"the cell path {key!r} in [calls] {problem}")
            calls[key] = count
        return calls

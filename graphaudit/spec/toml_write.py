"""Writing TOML values: strings quoted so that any name survives the round trip.

:meth:`Spec.to_toml <graphaudit.spec.Spec.to_toml>` lays out the sections; this module writes
the values: basic strings with every quote, backslash and control character escaped, lists of
names (one line when short, one item per line otherwise) and lists of ``[source, target]`` pairs.

Example:
    >>> print("frozen = " + string_list(['a "quoted" name', "tab\\there"]))
    frozen = ["a \\"quoted\\" name", "tab\\there"]
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["LINE_LENGTH", "pair_list", "quote", "string_list", "toml_data"]

LINE_LENGTH = 88  #: a list longer than this is written one item per line

_ESCAPES = {'"': '\\"', "\\": "\\\\", "\b": "\\b", "\t": "\\t", "\n": "\\n", "\f": "\\f", "\r": "\\r"}


def quote(text: str) -> str:
    """*text* as a TOML basic string (``"..."``), readable back to exactly *text*.

    Example:
        >>> print(quote('say "hi"\\n'))
        "say \\"hi\\"\\n"
        >>> print(quote("bell\\x07 ünï"))
        "bell\\u0007 ünï"
    """
    out = ['"']
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\u{ord(char):04X}")
        else:
            out.append(char)
    out.append('"')
    return "".join(out)


def string_list(values: Sequence[str], indent: str = "") -> str:
    """A TOML array of strings: on one line when it fits, else one item per line.

    Example:
        >>> string_list(["a", "b"])
        '["a", "b"]'
        >>> print(string_list([f"backbone.layer{i}.conv.weight" for i in range(4)]))
        [
            "backbone.layer0.conv.weight",
            "backbone.layer1.conv.weight",
            "backbone.layer2.conv.weight",
            "backbone.layer3.conv.weight",
        ]
    """
    items = [quote(v) for v in values]
    one_line = f"[{', '.join(items)}]"
    if len(one_line) + len(indent) <= LINE_LENGTH:
        return one_line
    return "[\n" + "".join(f"{indent}    {item},\n" for item in items) + f"{indent}]"


def pair_list(pairs: Sequence[tuple[str, str]]) -> str:
    """A TOML array of ``[source, target]`` pairs, one pair per line.

    Example:
        >>> print(pair_list([("stem", "body"), ("body", "head")]))
        [
            ["stem", "body"],
            ["body", "head"],
        ]
        >>> pair_list([])
        '[]'
    """
    if not pairs:
        return "[]"
    return "[\n" + "".join(f"    [{quote(a)}, {quote(b)}],\n" for a, b in pairs) + "]"


def toml_data(spec: Any) -> dict[str, Any]:
    """*spec*'s fields as the TOML data they would be written as, whatever their types.

    :meth:`Spec.validate <graphaudit.spec.Spec.validate>` reads this with the spec file's own
    reader, so a field of the wrong type gets the words a wrong key of a file gets.

    Example:
        >>> from graphaudit.spec import Spec
        >>> toml_data(Spec(expected_connections=[("stem", "head")]))["connections"]["expected"]
        [['stem', 'head']]
    """

    def listed(value: Any) -> Any:
        if isinstance(value, (list, tuple)):
            return [list(v) if isinstance(v, tuple) else v for v in value]
        return value

    def groups(value: Any, key: str) -> Any:
        return [{key: listed(g)} for g in value] if isinstance(value, (list, tuple)) else value

    return {
        "parameters": {"frozen": listed(spec.frozen), "trainable": listed(spec.trainable)},
        "shared": {
            "parameters": groups(spec.shared_parameters, "names"),
            "cells": groups(spec.shared_cells, "paths"),
        },
        "connections": {
            "expected": listed(spec.expected_connections),
            "forbidden": listed(spec.forbidden_connections),
            "exhaustive": spec.exhaustive_connections,
            "linear": listed(spec.linear_connections),
        },
        "calls": spec.calls,
        "model": {"causal": spec.causal},
    }

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

__all__ = ["LINE_LENGTH", "pair_list", "quote", "string_list"]

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

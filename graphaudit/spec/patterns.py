"""The glob patterns a spec is written in: matching, escaping, and what makes one malformed.

Names, cell paths and call keys of a :class:`~graphaudit.spec.Spec` are shell-style globs
(``fnmatch``, case-sensitive): ``*`` matches any text including dots, ``?`` one character,
``[0-3]`` one character of a set. This module depends on nothing else in graphaudit.

Example:
    >>> matches_any(["backbone.*"], "backbone.conv.weight")
    True
    >>> matches_any([escape("heads[0].*")], "heads0.weight")  # escaped: the brackets are literal
    False
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from fnmatch import fnmatchcase

__all__ = ["escape", "glob_problem", "matches_any", "unescape"]


def matches_any(patterns: Iterable[str], name: str) -> bool:
    """True when *name* matches one of the glob *patterns*.

    Example:
        >>> matches_any(["layer1.*", "fc.bias"], "layer1.0.conv.weight")
        True
        >>> matches_any(["layer1.*", "fc.bias"], "fc.weight")
        False
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


def unescape(pattern: str) -> str:
    """The name an :func:`escape`-d *pattern* matches (snapshots hold names that way).

    Example:
        >>> unescape("heads[[]0].weight")
        'heads[0].weight'
        >>> unescape(escape("a*b?[c]"))
        'a*b?[c]'
    """
    return re.sub(r"\[([*?\[])\]", r"\1", pattern)


def glob_problem(pattern: str) -> str | None:
    """What is wrong with a glob *pattern*, or ``None`` when it is well formed.

    Example:
        >>> glob_problem("layers.[0-2].weight") is None
        True
        >>> glob_problem("layers.[0.weight")
        "has an unbalanced '[' at character 8 (write '[[]' to match a literal '[')"
        >>> glob_problem("")
        'is empty'
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

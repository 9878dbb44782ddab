"""The words every finding and report is written with: listings, counts, pronouns, escaping.

A check renders its cause to words (:class:`~graphaudit.findings.Cause`) only through these
functions, so that every finding lists, counts and agrees the same way: one listing (``a, b,
c, d and 2 more``), one plural (``1 parameter``, ``3 parameters``: never ``parameter(s)``), one
set of pronouns for a group of one or of several, one escaping of what a terminal shows.

Example:
    >>> listing(["fc.weight", "fc.bias"]), counted(1, "layer"), counted(3, "layer")
    ('fc.weight and fc.bias', '1 layer', '3 layers')
    >>> members(["head.weight", "head.bias"], "parameter", holder="head")
    'the 2 parameters of head (head.weight and head.bias)'
    >>> they = pronouns(2); f"{they.subject} {they.keep} {they.possessive} value"
    'they keep their value'
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import NamedTuple

__all__ = [
    "LIMIT",
    "Pronouns",
    "bracketed",
    "clauses",
    "counted",
    "is_are",
    "listing",
    "members",
    "plural",
    "printable",
    "pronouns",
    "series",
    "shape_text",
]

#: How many items a listing spells out before it says ``and N more``.
LIMIT = 4
_UNCOUNTABLE = frozenset({"info"})
_NAMED_ESCAPES = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def printable(value: object, *, newlines: bool = False) -> str:
    """*value* as text a terminal or a log shows as written: every non-printable character escaped.

    A newline in a cell name would start a line of its own (a forged ``OK: ...``), ``\\r``
    would overwrite one, an ESC byte would drive the terminal, a direction override
    (U+202E) would reorder what is shown. Each character that is not printable
    (:meth:`str.isprintable`: controls, format and separator characters other than the
    space) is written as its escape, ``\\n``, ``\\x1b`` as ``\\u001b``, ``\\u202e``: escapes that
    JSON and TOML strings read back as the same character. With *newlines*, ``\\n`` is kept
    (text made of several lines, each already escaped).

    Example:
        >>> print(printable("head\\nOK: no findings\\x1b[2J\\u202e"))
        head\\nOK: no findings\\u001b[2J\\u202e
        >>> printable("a\\nb", newlines=True) == "a\\nb"
        True
    """
    text = str(value)
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable() or (newlines and char == "\n"):
            out.append(char)
        elif char in _NAMED_ESCAPES:
            out.append(_NAMED_ESCAPES[char])
        elif ord(char) > 0xFFFF:  # as a JSON string writes it: a surrogate pair
            high, low = divmod(ord(char) - 0x10000, 0x400)
            out.append(f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}")
        else:
            out.append(f"\\u{ord(char):04x}")
    return "".join(out)


def plural(count: int, word: str) -> str:
    """``"1 error"``, ``"2 errors"``: a count and its noun, as every report writes them.

    Example:
        >>> plural(1, "error"), plural(2, "warning"), plural(3, "info")
        ('1 error', '2 warnings', '3 info')
    """
    return f"{count} {word}{'' if count == 1 or word in _UNCOUNTABLE else 's'}"


def counted(count: int, noun: str, many: str | None = None) -> str:
    """*count* and *noun*, the noun plural unless the count is one (*many*: an irregular plural).

    Example:
        >>> counted(1, "parameter"), counted(2, "parameter"), counted(2, "entry", "entries")
        ('1 parameter', '2 parameters', '2 entries')
    """
    if count == 1:
        return f"1 {noun}"
    return f"{count} {many}" if many is not None else plural(count, noun)


def is_are(count: int) -> str:
    """``is`` for one, ``are`` for several.

    Example:
        >>> is_are(1), is_are(0), is_are(3)
        ('is', 'are', 'are')
    """
    return "is" if count == 1 else "are"


def listing(items: Iterable[object], limit: int | None = LIMIT, *, separator: str = ", ") -> str:
    """*items* as readable text, at most *limit* of them spelt out (``None``: all of them).

    The one listing of graphaudit: ``a``, ``a and b``, ``a, b and c``, ``a, b, c, d and 2 more``.
    Items that hold commas or "and" themselves are listed with ``separator="; "``, every one
    after a semicolon, so that no "and" joins two of them: ``x: 1 and 2; y: 3``.

    Example:
        >>> listing(["a"]), listing(["a", "b"]), listing(["a", "b", "c", "d", "e", "f"])
        ('a', 'a and b', 'a, b, c, d and 2 more')
        >>> listing([1, 2, 3], limit=None), listing(["x: 1 and 2", "y: 3"], separator="; ")
        ('1, 2 and 3', 'x: 1 and 2; y: 3')
        >>> listing("abcdef", separator="; ")
        'a; b; c; d; and 2 more'
        >>> listing([])
        ''
    """
    shown = [str(item) for item in items]
    if len(shown) <= 1:
        return shown[0] if shown else ""
    cut = limit is not None and len(shown) > limit
    if separator != ", ":
        return separator.join(shown[:limit] if cut else shown) + (
            f"{separator}and {len(shown) - limit} more" if cut else ""
        )
    if not cut:
        return f"{separator.join(shown[:-1])} and {shown[-1]}"
    return f"{separator.join(shown[:limit])} and {len(shown) - limit} more"


def series(items: Iterable[object]) -> str:
    """Values in their order, as a curve or a row of numbers reads (``2, 1.5, 0.9``): not a listing.

    Example:
        >>> series([2, 1.5, "nan"])
        '2, 1.5, nan'
    """
    return ", ".join(str(item) for item in items)


def bracketed(items: Iterable[object], brackets: str = "[]") -> str:
    """A sequence written as a value, as code writes it (``[0.5, 0.25]``): one value, not a listing.

    Example:
        >>> bracketed(["x * 2", "x * 3"]), bracketed([1, 2], "()")
        ('[x * 2, x * 3]', '(1, 2)')
    """
    return f"{brackets[0]}{series(items)}{brackets[1]}"


def clauses(parts: Iterable[str]) -> str:
    """Clauses of one sentence, each about one thing, joined by semicolons: ``a is 0; b is 1``.

    Example:
        >>> clauses(["the mean is 120", "the std is 60"])
        'the mean is 120; the std is 60'
    """
    return "; ".join(parts)


def shape_text(shape: Iterable[int]) -> str:
    """A tensor's shape as MindSpore and NumPy print it: ``(2, 3)``, ``(3,)``, ``()``.

    Example:
        >>> shape_text([2, 3]), shape_text([3]), shape_text([])
        ('(2, 3)', '(3,)', '()')
    """
    return str(tuple(int(d) for d in shape))


def members(names: Sequence[str], what: str, *, holder: str | None = None, note: str = "") -> str:
    """A group of parameters or cells in a sentence: ``head.bias``, ``the 2 parameters of head (...)``.

    One member is named (with *note*: how its ``Parameter.name`` differs from its path); several
    held by one cell (*holder*) are counted as *what* of it and listed; several others listed.

    Example:
        >>> members(["fc.bias"], "parameter"), members(["a.w", "b.w"], "parameter")
        ('fc.bias', 'a.w and b.w')
    """
    if len(names) == 1:
        return names[0] + note
    if holder is not None:
        return f"the {len(names)} {what}s of {holder} ({listing(names)})"
    return listing(names)


class Pronouns(NamedTuple):
    """``it`` / ``they`` and the words that agree with them."""

    subject: str
    object: str
    possessive: str
    be: str
    keep: str


_ONE = Pronouns("it", "it", "its", "is", "keeps")
_SEVERAL = Pronouns("they", "them", "their", "are", "keep")


def pronouns(count: int) -> Pronouns:
    """The words that refer back to *count* things: singular for one, plural for more.

    Example:
        >>> pronouns(1).subject, pronouns(2).be
        ('it', 'are')
    """
    return _ONE if count == 1 else _SEVERAL

""" "Did you mean ...?": the one place graphaudit looks for near misses of a name.

Misspelt check IDs, spec keys, parameter names and cell paths, a ``require_grad``
attribute that was meant to be ``requires_grad``: every message that suggests a name gets it
from :func:`close_matches`, and words it with :func:`did_you_mean` or :func:`close_list`.

Example:
    >>> close_matches("encodr", ["encoder", "decoder", "head"])
    ['encoder', 'decoder']
    >>> did_you_mean("parameter", ["parameters", "shared"])
    "; did you mean 'parameters'?"
    >>> close_list("hed.weight", ["head.weight", "head.bias"])
    ' Close matches: head.weight.'
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = ["close_list", "close_matches", "did_you_mean"]


#: Characters typed for one another: a letter O for a zero in ``GA2O1``, a lower-case L for a one.
_LOOKALIKES = str.maketrans({"O": "0", "I": "1", "L": "1"})


def _folded(word: str) -> str:
    return word.upper().translate(_LOOKALIKES)


def close_matches(word: str, candidates: Iterable[str], *, n: int = 3, cutoff: float = 0.6) -> list[str]:
    """Up to *n* of *candidates* that look like *word*, the closest first.

    A candidate that differs from *word* only by case or by look-alike characters (``O`` for
    ``0``) comes first: ``difflib`` alone ranks ``GA721`` as close to ``GA2O1`` as ``GA201``.

    Example:
        >>> close_matches("GA2O1", ["GA721", "GA201"], n=1)
        ['GA201']
    """
    unique = list(dict.fromkeys(candidates))
    same = [c for c in unique if _folded(c) == _folded(word)]
    rest = difflib.get_close_matches(word, unique, n=n, cutoff=cutoff)
    return list(dict.fromkeys([*same, *rest]))[:n]


def did_you_mean(word: str, candidates: Iterable[str], *, cutoff: float = 0.6) -> str:
    """``"; did you mean 'x'?"`` for the closest candidate, or ``""`` when none is close."""
    close = close_matches(word, candidates, n=1, cutoff=cutoff)
    return f"; did you mean {close[0]!r}?" if close else ""


def close_list(word: str, candidates: Iterable[str], *, n: int = 3) -> str:
    """``" Close matches: a, b."`` for up to *n* candidates, or ``""`` when none is close."""
    close = close_matches(word, candidates, n=n)
    return f" Close matches: {', '.join(close)}." if close else ""

"""Checks of the public entry points' arguments, shared so that a wrong argument gets the same kind of error.

Each raises one of :mod:`graphaudit.errors`' errors (also a ``TypeError`` or ``ValueError``)
saying what was given and how to fix it, wherever the argument is given.

Example:
    >>> check_count(3, "rank", "fingerprint()", minimum=0)
    3
"""

from __future__ import annotations

import functools
import inspect
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from graphaudit.errors import ArgumentError, ArgumentTypeError
from graphaudit.suggest import did_you_mean

__all__ = ["check_callable", "check_count", "check_names", "check_path", "checked_call"]


def check_path(value: Any, argument: str, function: str, *, allow_none: bool = False) -> Path | None:
    """*value* as a :class:`~pathlib.Path`; an :class:`ArgumentTypeError` when it is no path.

    Example:
        >>> check_path("out/graph.svg", "path", "render()")
        PosixPath('out/graph.svg')
        >>> check_path(3, "path", "render()")
        Traceback (most recent call last):
        ...
        graphaudit.errors.ArgumentTypeError: render() expects path= to be a file path (a str or pathlib.Path), got int 3
    """
    if value is None and allow_none:
        return None
    if isinstance(value, (str, os.PathLike)) and str(value) != "":
        return Path(value)
    raise ArgumentTypeError(
        f"{function} expects {argument}= to be a file path (a str or pathlib.Path), "
        f"got {type(value).__name__} {value!r}"[:300]
    )


def check_names(value: Any, argument: str, function: str, *, what: str = "check IDs") -> list[str]:
    """*value* as a list of strings; a single string is refused (it would iterate by letter).

    Example:
        >>> check_names(("GA101",), "allow", "assert_clean()")
        ['GA101']
        >>> check_names("GA101", "allow", "assert_clean()")
        Traceback (most recent call last):
        ...
        graphaudit.errors.ArgumentTypeError: assert_clean() expects allow= to be a list of check IDs, got the str 'GA101': write allow=['GA101']
    """
    if isinstance(value, str):
        raise ArgumentTypeError(
            f"{function} expects {argument}= to be a list of {what}, got the str {value!r}: "
            f"write {argument}=[{value!r}]"
        )
    try:
        names = list(value)
    except TypeError:
        raise ArgumentTypeError(
            f"{function} expects {argument}= to be a list of {what}, got {type(value).__name__} {value!r}"[
                :300
            ]
        ) from None
    wrong = [n for n in names if not isinstance(n, str)]
    if wrong:
        raise ArgumentTypeError(
            f"{function} expects {argument}= to be a list of {what} (strings), "
            f"but it holds {type(wrong[0]).__name__} {wrong[0]!r}"[:300]
        )
    return names


def check_callable(value: Any, argument: str, function: str, *, takes: str) -> Any:
    """*value* when it is callable or None; an :class:`ArgumentTypeError` otherwise.

    Example:
        >>> check_callable(print, "on_finding", "Watch()", takes="a Finding") is print
        True
    """
    if value is not None and not callable(value):
        raise ArgumentTypeError(
            f"{function} expects {argument}= to be a function taking {takes} (or None), "
            f"got {type(value).__name__} {value!r}"[:300]
        )
    return value


def check_count(
    value: Any, argument: str, function: str, *, minimum: int, allow_none: bool = False
) -> int | None:
    """*value* when it is a whole number >= *minimum* (not a bool); a graphaudit error otherwise.

    Example:
        >>> check_count(0, "rank", "fingerprint()", minimum=0)
        0
        >>> check_count("1", "rank", "fingerprint()", minimum=0)
        Traceback (most recent call last):
        ...
        graphaudit.errors.ArgumentTypeError: fingerprint() expects rank= to be a whole number >= 0, got str '1'
    """
    if value is None and allow_none:
        return None
    if isinstance(value, bool) or not isinstance(value, int):
        raise ArgumentTypeError(
            f"{function} expects {argument}= to be a whole number >= {minimum}, got {type(value).__name__} {value!r}"[
                :300
            ]
        )
    if value < minimum:
        raise ArgumentError(f"{function} expects {argument}= to be at least {minimum}, got {value}")
    return value


Function = TypeVar("Function", bound=Callable[..., Any])


def checked_call(function: Function) -> Function:
    """*function*, raising an :class:`ArgumentTypeError` when a call does not fit its signature.

    Python's own ``TypeError`` for a call that does not fit (``audit(net, opt, x)``) names
    neither the keywords nor what was probably meant; this one does, and is a graphaudit
    error like every other wrong argument. The signature and docstring stay the function's.

    Example:
        >>> @checked_call
        ... def audit(net, optimizer=None, *, inputs=None, label=None):
        ...     return net
        >>> audit("net", "optimizer", "x")
        Traceback (most recent call last):
        ...
        graphaudit.errors.ArgumentTypeError: audit() takes 2 positional arguments (net, optimizer) but 3 were given: the others are keywords, e.g. audit(net, optimizer, inputs=..., label=...)
        >>> audit("net", input="x")
        Traceback (most recent call last):
        ...
        graphaudit.errors.ArgumentTypeError: audit() got an unexpected keyword argument 'input'; did you mean 'inputs'? (its keywords are net, optimizer, inputs, label)
    """
    signature = inspect.signature(function)
    name = function.__qualname__.removesuffix(".__init__") + "()"
    bound_method = function.__name__ == "__init__" or next(iter(signature.parameters), "") in ("self", "cls")

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            signature.bind(*args, **kwargs)
        except TypeError as err:
            raise ArgumentTypeError(
                _misfit(name, signature, args, kwargs, skip_first=bound_method, err=err)
            ) from None
        return function(*args, **kwargs)

    return call  # type: ignore[return-value]


def _misfit(
    name: str,
    signature: inspect.Signature,
    args: tuple[Any, ...],
    kwargs: dict[str, Any],
    *,
    skip_first: bool,
    err: TypeError,
) -> str:
    """What is wrong with a call of *name* that *signature* refused, in the user's terms."""
    params = list(signature.parameters.values())[1 if skip_first else 0 :]
    given = len(args) - (1 if skip_first else 0)
    kinds = inspect.Parameter
    positional = [p.name for p in params if p.kind in (kinds.POSITIONAL_ONLY, kinds.POSITIONAL_OR_KEYWORD)]
    keywords = [p.name for p in params if p.kind in (kinds.POSITIONAL_OR_KEYWORD, kinds.KEYWORD_ONLY)]
    takes_any = any(p.kind is kinds.VAR_KEYWORD for p in params)
    if given > len(positional) and not any(p.kind is kinds.VAR_POSITIONAL for p in params):
        only = [p.name for p in params if p.kind is kinds.KEYWORD_ONLY][:2]
        example = ", ".join([*positional, *(f"{k}=..." for k in only)]) if only else ", ".join(positional)
        what = f"{len(positional)} positional argument{'s' if len(positional) != 1 else ''}"
        return (
            f"{name} takes {what} ({', '.join(positional)}) but {given} were given: "
            f"the others are keywords, e.g. {name[:-2]}({example})"
        )
    unknown = [k for k in kwargs if k not in keywords]
    if unknown and not takes_any:
        return (
            f"{name} got an unexpected keyword argument {unknown[0]!r}{did_you_mean(unknown[0], keywords)} "
            f"(its keywords are {', '.join(keywords)})"
        )
    return f"{name} {err}"  # a missing or doubly given argument: bind()'s words name it

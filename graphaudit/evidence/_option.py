"""The keywords of ``audit()`` that evidence kinds declare, and how each value is parsed at the door.

Re-exported by :mod:`graphaudit.evidence` (``from graphaudit.evidence import Option``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from graphaudit.errors import ArgumentError, ArgumentTypeError, GraphAuditError, OptionError

__all__ = ["Option", "boolean"]

#: The value types an :class:`Option` parses, as its messages name them.
_TYPE_WORDS = {int: "a whole number", float: "a number"}


@dataclass(frozen=True)
class Option:
    """A keyword of :func:`graphaudit.audit` (and its command-line flag) that feeds one kind of evidence.

    ``flag`` is the ``graphaudit audit`` option (``None``: Python only); ``cli_value`` says
    how the command line turns the flag's text into the keyword's value: ``"text"`` as it
    is, ``"paths"`` a list of file paths, ``"reference"`` a ``MODULE:FACTORY`` that is
    imported and called, ``"flag"`` a switch (``True`` when given).

    The value is parsed once, at the door (:meth:`check`, when the request is built, and as
    argparse's ``type=`` for the flag, :meth:`from_text`), by its declaration: ``type``
    (``int``, ``float`` or ``str``; a ``"flag"`` is a boolean), the bounds ``minimum``
    (inclusive), ``above`` (exclusive) and ``maximum``, and ``choices``. ``parse``, for
    what a declaration cannot say, takes the option's name and the value and returns the
    value to use. ``default`` is the value when the keyword is not given (what
    ``AuditRequest.option`` returns then). Every refusal is an :class:`~graphaudit.errors.OptionError` naming the
    option as ``name=`` in Python and as its flag on the command line.

    Example:
        >>> steps = Option("total_steps", "how many steps", flag="--total-steps", metavar="N", type=int, minimum=1)
        >>> steps.check(100), steps.from_text("100"), steps.describe()
        (100, 100, 'a whole number >= 1')
        >>> steps.check("abc")
        Traceback (most recent call last):
        ...
        graphaudit.errors.OptionError: total_steps= takes a whole number >= 1, got 'abc' (str).
        >>> try:
        ...     steps.check(0)
        ... except GraphAuditError as err:
        ...     print(err.text("cli"))
        --total-steps takes a whole number >= 1, got 0.
    """

    name: str
    help: str
    flag: str | None = None
    metavar: str = "VALUE"
    cli_value: str = "text"
    parse: Callable[[str, Any], Any] | None = None
    type: type | None = None
    minimum: float | None = None
    above: float | None = None
    maximum: float | None = None
    choices: tuple[Any, ...] | None = None
    default: Any = None  # the value when the keyword is not given: declared here, read nowhere else

    def describe(self) -> str:
        """What the option takes, in words (``"a whole number >= 1"``); ``""`` when it does not say."""
        if self.choices is not None:
            return "one of " + ", ".join(repr(c) if isinstance(c, str) else str(c) for c in self.choices)
        if self.type in (None, str):  # any text is a text: nothing to say
            return ""
        words = [_TYPE_WORDS.get(self.type, self.type.__name__)]
        if self.above is not None:
            words.append(f"> {self.above:g}")
        if self.minimum is not None:
            words.append(f">= {self.minimum:g}")
        if self.maximum is not None:
            words.append(f"<= {self.maximum:g}")
        return " ".join(words)

    def refuse(self, problem: str) -> OptionError:
        """The error for a value this option cannot take: *problem* follows the option's name in both wordings."""
        return OptionError(f"{self.name}= {problem}", cli=f"{self.flag} {problem}" if self.flag else None)

    def worded(self, err: GraphAuditError) -> GraphAuditError:
        """*err*, about this option's value, given the command line's wording (``--flag``) when it has none."""
        if err.cli is None and self.flag is not None:
            err.cli = (
                str(err).replace(f"{self.name}= ", f"{self.flag} ").replace(f"{self.name}=", f"{self.flag} ")
            )
        return err

    def check(self, value: Any) -> Any:
        """*value* parsed by the declaration (see the class docstring); ``None`` stays ``None``."""
        if value is None:
            return None
        if self.cli_value == "flag" and self.type in (None, bool) and self.parse is None:
            return boolean(self.name, value, self)
        given = value
        if self.type is not None:
            value = self._typed(value)
        if self.choices is not None and value not in self.choices:
            raise self.refuse(f"takes {self.describe()}, got {given!r}.")
        if isinstance(value, (int, float)) and not self._in_bounds(value):
            raise self.refuse(f"takes {self.describe()}, got {given!r}.")
        if self.parse is not None:
            try:
                value = self.parse(self.name, value)
            except (ArgumentError, ArgumentTypeError) as err:  # the value refused: the option's error
                raise self.worded(OptionError(str(err), cli=err.cli)) from err
        return value

    def from_text(self, text: str) -> Any:
        """The flag's text as the keyword's value (argparse's ``type=``): converted to ``type``, then :meth:`check`.

        Raises ``argparse.ArgumentTypeError`` (argparse says which flag) with the reason.
        """
        import argparse

        try:
            value = self.type(text) if self.type in (int, float) else text
        except ValueError:
            raise argparse.ArgumentTypeError(f"takes {self.describe()}, got {text!r}") from None
        try:
            return self.check(value)
        except GraphAuditError as err:
            raise argparse.ArgumentTypeError(err.text("cli").removeprefix(f"{self.flag} ")) from None

    def _typed(self, value: Any) -> Any:
        if self.type is int and isinstance(value, int) and not isinstance(value, bool):
            return int(value)
        if self.type is int and type(value).__name__.startswith(("int", "uint")):  # numpy integers
            return int(value)
        if self.type is float and isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        if self.type is float and type(value).__name__.startswith(("float", "int", "uint")):
            return float(value)
        if self.type is str and isinstance(value, str):
            return value
        takes = self.describe() or f"a {self.type.__name__}"
        raise self.refuse(f"takes {takes}, got {value!r} ({type(value).__name__}).")

    def _in_bounds(self, value: float) -> bool:
        if value != value:  # NaN: within no bounds
            return self.minimum is None and self.above is None and self.maximum is None
        return (
            (self.minimum is None or value >= self.minimum)
            and (self.above is None or value > self.above)
            and (self.maximum is None or value <= self.maximum)
        )


def boolean(name: str, value: Any, option: Option | None = None) -> bool:
    """*value* when it is a boolean (``numpy.bool_`` included); anything else is refused.

    ``"no"`` is true in Python, so a string, a number or any other object would silently
    switch the option on.

    Example:
        >>> boolean("graph_mode", True)
        True
        >>> boolean("graph_mode", "no")
        Traceback (most recent call last):
        ...
        graphaudit.errors.OptionError: graph_mode= takes True or False, got 'no' (str).
    """
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return bool(value)
    problem = f"takes True or False, got {value!r} ({type(value).__name__})."
    if option is not None:
        raise option.refuse(problem)
    raise OptionError(f"{name}= {problem}")

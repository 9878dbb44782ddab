"""The exceptions graphaudit raises.

Every error graphaudit raises derives from :class:`GraphAuditError`, says what was
wrong and what to do about it, and chains the original error (``raise ... from``)
when one exists, so the MindSpore traceback is still one ``__cause__`` away.

Example:
    >>> import graphaudit
    >>> try:
    ...     graphaudit.to_networkx([1, 2, 3])
    ... except graphaudit.NotACellError as err:
    ...     print(type(err).__name__)
    NotACellError
"""

from __future__ import annotations

__all__ = [
    "ForwardError",
    "GraphAuditError",
    "InputError",
    "NotACellError",
    "SpecError",
]


class GraphAuditError(Exception):
    """Base class of every error raised by graphaudit."""


class NotACellError(GraphAuditError, TypeError):
    """The object given where a ``mindspore.nn.Cell`` was expected is not one."""


class InputError(GraphAuditError, ValueError):
    """The ``inputs`` given for the forward pass are not usable (type, count)."""


class ForwardError(GraphAuditError, RuntimeError):
    """The network's own ``construct`` raised while graphaudit ran a forward pass."""


class SpecError(GraphAuditError, ValueError):
    """A design spec (a TOML file, or a :class:`~graphaudit.spec.Spec`) is malformed.

    The message reads ``file:line: problem``; ``source``, ``line`` and ``problem`` hold the
    parts (``line`` is ``None`` when the spec did not come from a file).
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        where = source or "<spec>"
        super().__init__(f"{where}:{line}: {problem}" if line is not None else f"{where}: {problem}")

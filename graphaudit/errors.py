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
]


class GraphAuditError(Exception):
    """Base class of every error raised by graphaudit."""


class NotACellError(GraphAuditError, TypeError):
    """The object given where a ``mindspore.nn.Cell`` was expected is not one."""


class InputError(GraphAuditError, ValueError):
    """The ``inputs`` given for the forward pass are not usable (type, count)."""


class ForwardError(GraphAuditError, RuntimeError):
    """The network's own ``construct`` raised while graphaudit ran a forward pass."""

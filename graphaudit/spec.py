"""Declared designs: what a network is meant to share, freeze, connect and call.

A :class:`Spec` states the design; checks compare the captured graph against it. Patterns
are shell-style globs (``fnmatch``): ``backbone.*`` matches every parameter whose name
starts with ``backbone.``.

Example:
    >>> spec = Spec(frozen=["backbone.*"], shared_parameters=[["embed.embedding_table", "decoder.weight"]])
    >>> spec.is_frozen("backbone.conv.weight"), spec.is_frozen("head.weight")
    (True, False)
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from fnmatch import fnmatchcase

__all__ = ["Spec", "matches_any"]


def matches_any(patterns: Iterable[str], name: str) -> bool:
    """True when *name* matches one of the glob *patterns*.

    Example:
        >>> matches_any(["layer1.*", "fc.bias"], "layer1.0.conv.weight")
        True
    """
    return any(fnmatchcase(name, pattern) for pattern in patterns)


@dataclass
class Spec:
    """A network's declared design.

    - ``frozen`` / ``trainable``: glob patterns on parameter names that must not / must train.
    - ``shared_parameters``: groups of parameter names (or attribute paths) that must be one
      Parameter object (tied weights).
    - ``shared_cells``: groups of cell paths that must be one Cell object.
    - ``expected_connections`` / ``forbidden_connections``: ``(source, target)`` cell paths or
      globs; a connection is a data flow from the source cell into the target cell, directly
      or through functional operations only.
    - ``exhaustive_connections``: when true, every connection between the cells named in
      ``expected_connections`` that is not declared is reported.
    - ``calls``: how many times each cell path is called in one forward pass.
    - ``source``: the file the spec was loaded from, for messages.
    """

    frozen: list[str] = field(default_factory=list)
    trainable: list[str] = field(default_factory=list)
    shared_parameters: list[list[str]] = field(default_factory=list)
    shared_cells: list[list[str]] = field(default_factory=list)
    expected_connections: list[tuple[str, str]] = field(default_factory=list)
    forbidden_connections: list[tuple[str, str]] = field(default_factory=list)
    exhaustive_connections: bool = False
    calls: dict[str, int] = field(default_factory=dict)
    source: str | None = None

    def is_frozen(self, name: str) -> bool:
        """Whether the design declares parameter *name* frozen."""
        return matches_any(self.frozen, name)

    def is_trainable(self, name: str) -> bool:
        """Whether the design explicitly declares parameter *name* trainable."""
        return matches_any(self.trainable, name)

    def declares_shared_parameter(self, name: str) -> bool:
        """Whether *name* belongs to a declared group of tied parameters."""
        return any(matches_any(group, name) for group in self.shared_parameters)

    def declares_shared_cell(self, path: str) -> bool:
        """Whether cell *path* belongs to a declared group of shared cells."""
        return any(matches_any(group, path) for group in self.shared_cells)

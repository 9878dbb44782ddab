"""Declared designs: what a network is meant to share, freeze, connect and call.

A :class:`Spec` states the design; checks compare the captured graph against it. Patterns
are shell-style globs (``fnmatch``): ``backbone.*`` matches every parameter whose name
starts with ``backbone.``.

A spec lives in a TOML file (:meth:`Spec.load`, :meth:`Spec.save`; the layout is in
``docs/spec.md``), can be snapshotted from a network known to be right
(:meth:`Spec.from_net`), and compared with another one (:meth:`Spec.diff`). The package
follows those concerns, each module importing only the ones above it (``diff`` names
``Spec`` in type hints only; ``model`` loads ``snapshot``, which imports NetworkX, when
:meth:`Spec.from_graph` is first called):

- :mod:`graphaudit.spec.patterns`: :func:`matches_any`, :func:`escape`, :func:`glob_problem`;
- :mod:`graphaudit.spec.toml_write`: TOML strings and lists, quoted for any name;
- :mod:`graphaudit.spec.toml_locate`: the line of a key or array element in a TOML text;
- :mod:`graphaudit.spec.toml_read`: the checked reading of a spec file, ``file:line:`` errors;
- :mod:`graphaudit.spec.diff`: the differences between a declared and an observed design;
- :mod:`graphaudit.spec.snapshot`: the design a captured graph shows;
- :mod:`graphaudit.spec.model`: the :class:`Spec` dataclass, tying them together.

Nothing here imports MindSpore; :meth:`Spec.from_net` imports the capture when called.

Example:
    >>> spec = Spec(frozen=["backbone.*"], shared_parameters=[["embed.embedding_table", "decoder.weight"]])
    >>> spec.is_frozen("backbone.conv.weight"), spec.is_frozen("head.weight")
    (True, False)
    >>> Spec.from_toml(spec.to_toml()) == spec
    True
"""

from __future__ import annotations

from graphaudit.spec.model import Spec
from graphaudit.spec.patterns import escape, glob_problem, matches_any

__all__ = ["Spec", "escape", "glob_problem", "matches_any"]

"""Run Graphviz's ``dot`` on DOT source, with a timeout, and turn its failures into clear errors.

The DOT is written with the ``graphviz`` package, but laid out here: its ``pipe()`` and
``render()`` have no time limit (a layout that takes an hour blocks the caller for an
hour), look for ``dot`` on ``PATH`` only, copy dot's warnings to ``sys.stderr`` and fail
with a bare ``CalledProcessError``. :func:`run_dot` stops (kills) ``dot`` after *timeout*
seconds and says how to draw less; ``$GRAPHAUDIT_DOT`` names another ``dot``.

Example:
    >>> try:
    ...     run_dot("digraph { a -> }", "svg")
    ... except RenderError as err:
    ...     print(str(err)[:32])
    Graphviz's dot failed (exit code
"""

from __future__ import annotations

import os
import shutil
import subprocess

from graphaudit.errors import RenderError, RenderTimeoutError

__all__ = ["BINARY_FORMATS", "RenderError", "RenderTimeoutError", "find_dot", "run_dot"]

BINARY_FORMATS = ("png", "pdf")


def find_dot() -> str:
    """The path of Graphviz's ``dot`` program (``$GRAPHAUDIT_DOT`` overrides the search).

    Example:
        >>> import pathlib
        >>> pathlib.Path(find_dot()).name
        'dot'
    """
    found = os.environ.get("GRAPHAUDIT_DOT") or shutil.which("dot")
    if not found:
        raise RenderError(
            "Graphviz's `dot` program was not found on PATH: install Graphviz "
            "(`apt-get install graphviz`, `brew install graphviz`, `conda install graphviz`), "
            "or use format='dot' to write the DOT source only."
        )
    return found


def run_dot(
    source: str, fmt: str, *, timeout: float | None = 60.0, nodes: int | None = None, depth: int | None = None
) -> bytes:
    """Lay out *source* with ``dot -T<fmt>`` and return the output; stop it after *timeout* s.

    *nodes* (how many nodes the drawing has) and *depth* (the depth it was drawn at) are
    only used in the error message.

    Example:
        >>> run_dot("digraph { a -> b }", "svg")[:5]
        b'<?xml'
        >>> try:
        ...     run_dot("digraph { a -> b }", "gif-animated")
        ... except RenderError as err:
        ...     print(str(err)[:30])
        unsupported format 'gif-animat
    """
    if fmt not in ("svg", *BINARY_FORMATS):
        raise RenderError(f"unsupported format {fmt!r} for dot; use 'svg', 'png' or 'pdf'")
    command = [find_dot(), f"-T{fmt}"]
    try:  # subprocess.run kills dot when the timeout expires, so no layout outlives it
        done = subprocess.run(
            command, input=source.encode("utf-8"), capture_output=True, timeout=timeout, check=False
        )
    except subprocess.TimeoutExpired as err:
        size = f"{nodes} nodes" if nodes is not None else "the graph"
        smaller = max(depth - 1, 0) if depth else 2
        drawn = f" (drawn at depth {depth})" if depth is not None else ""
        raise RenderTimeoutError(
            f"Graphviz's dot did not lay out {size}{drawn} within {timeout} s and was stopped. "
            f"Draw less: pass depth={smaller} (cells deeper than that become one box each), "
            "rollup=True, params='none' or a smaller max_nodes=...; or allow more time with timeout=..."
        ) from err
    except OSError as err:
        raise RenderError(f"could not run Graphviz's dot ({command[0]}): {err}") from err
    if done.returncode != 0:
        message = done.stderr.decode("utf-8", "replace").strip()[-2000:]
        raise RenderError(f"Graphviz's dot failed (exit code {done.returncode}): {message}")
    return done.stdout

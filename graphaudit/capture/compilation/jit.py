"""What the user compiles with ``mindspore.jit``, and running it as Python for the traced pass.

MindSpore 2.x compiles a function or a ``construct`` decorated with ``@jit`` (``@ms.jit``,
``jit(fn, jit_level=...)``, ``jit(cell)``, ``jit`` on a ``Cell`` subclass): what runs
inside is one compiled graph, and a Python-level tracer sees none of it. Every form of the
default ``capture_mode="ast"`` goes through one wrapper that checks ``MS_JIT`` *at call
time* (``mindspore/graph/api.py``: ``if os.getenv("MS_JIT") == '0': return func(...)``;
``nn/cell.py`` does the same for a cell called in ``GRAPH_MODE``), so :func:`jit_disabled`
sets ``MS_JIT=0`` for the traced pass and the pass runs exactly the Python the user wrote,
eagerly; the variable is put back as it was, also when the pass fails.

:func:`compiled_boundaries` reads, without running anything, which cells' ``construct``
is compiled and which ``jit`` functions a cell's code calls: the graph records them on the
cell nodes (``compiled``, ``jit_functions``) for the report, the drawing and GA712/GA713.

Example:
    >>> import os
    >>> from mindspore import jit, nn, ops
    >>> class Block(nn.Cell):
    ...     @jit
    ...     def construct(self, x):
    ...         return ops.relu(x)
    >>> compiled_boundaries(Block())
    ('jit', ())
    >>> before = os.environ.get("MS_JIT")
    >>> with jit_disabled():
    ...     os.environ["MS_JIT"]
    '0'
    >>> os.environ.get("MS_JIT") == before
    True
"""

from __future__ import annotations

import functools
import os
import types
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # checks read python_function(): importing this module stays light
    from mindspore import nn

__all__ = ["compiled_boundaries", "is_jit_compiled", "jit_disabled", "python_function", "unwrap_jit_cell"]

_VARIABLE = "MS_JIT"


def is_jit_compiled(function: Any) -> bool:
    """Whether *function* (a function or a bound method) is one ``mindspore.jit`` made."""
    function = getattr(function, "__func__", function)
    return bool(getattr(function, "__wrapped_by_jit__", False))


def python_function(function: Any) -> Any:
    """The function the user wrote behind a ``jit`` wrapper (its code, file and lines), else *function*.

    What reads a ``construct``'s code (its names, its source, its file) reads this: a
    ``@jit`` method's own ``__code__`` is MindSpore's wrapper.

    Example:
        >>> from mindspore import jit
        >>> def double(x):
        ...     return x * 2
        >>> python_function(jit(double)) is double
        True
    """
    while is_jit_compiled(function):
        inner = getattr(getattr(function, "__func__", function), "__wrapped__", None)
        if inner is None:
            break
        function = inner
    return function


@contextmanager
def jit_disabled() -> Iterator[None]:
    """``MS_JIT=0`` inside (``jit`` functions run as Python); the variable as it was afterwards.

    The variable is process-wide: another thread calling a ``jit`` function meanwhile runs it
    as Python too, which computes the same values, only slower.
    """
    before = os.environ.get(_VARIABLE)
    os.environ[_VARIABLE] = "0"
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(_VARIABLE, None)
        else:
            os.environ[_VARIABLE] = before


def unwrap_jit_cell(value: Any) -> Any:
    """The cell behind ``jit(cell)`` (the compiled ``construct`` bound to *cell*), else *value*."""
    from mindspore import nn

    owner = getattr(value, "__self__", None)
    if isinstance(value, types.MethodType) and isinstance(owner, nn.Cell) and is_jit_compiled(value):
        return owner
    return value


def compiled_boundaries(cell: nn.Cell) -> tuple[str, tuple[str, ...]]:
    """``("jit", functions)`` when *cell*'s ``construct`` is compiled, else ``("", functions)``.

    *functions* are the ``jit`` functions and methods its class's code calls by name (a
    module-level helper, another ``@jit`` method), sorted.
    """
    own = vars(cell).get("construct")
    if own is not None:
        compiled = is_jit_compiled(own)
    else:
        # MindSpore's own cells (an optimizer's construct is @jit) are not the user's choice.
        compiled = not type(cell).__module__.startswith("mindspore.") and _class_construct_compiled(
            type(cell)
        )
    return ("jit" if compiled else ""), _class_jit_functions(type(cell))


@functools.lru_cache(maxsize=1024)
def _class_construct_compiled(kind: type) -> bool:
    return is_jit_compiled(getattr(kind, "construct", None))


@functools.lru_cache(maxsize=1024)
def _class_jit_functions(kind: type) -> tuple[str, ...]:
    if kind.__module__.startswith("mindspore."):
        return ()  # MindSpore's own cells: an optimizer's compiled construct is not the user's choice
    found: set[str] = set()
    for klass in kind.__mro__:
        if klass.__module__.startswith("mindspore.") or klass is object:
            continue
        for name, member in vars(klass).items():
            function = getattr(member, "__func__", member)
            if not isinstance(function, types.FunctionType):
                continue
            if name != "construct" and is_jit_compiled(function):
                found.add(f"{kind.__name__}.{name}")
            found.update(_called_jit_globals(function))
    return tuple(sorted(found))


def _called_jit_globals(function: types.FunctionType) -> set[str]:
    inner = python_function(function)  # a @jit method: read the code it wraps
    code, namespace = inner.__code__, inner.__globals__
    names: set[str] = set()
    stack = [code]
    while stack:
        current = stack.pop()
        names.update(current.co_names)
        stack.extend(c for c in current.co_consts if isinstance(c, types.CodeType))
    return {name for name in names if is_jit_compiled(namespace.get(name))}

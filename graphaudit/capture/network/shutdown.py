"""Let MindSpore's cells be collected quietly when the interpreter exits.

``mindspore.nn.Cell.__del__`` decrements ``Cell.total_instance_count`` through the module
global ``Cell``. When the interpreter shuts down it clears module globals before the last
cells are collected (those still held by other modules, pytest's collected test modules,
reference cycles), so each such ``__del__`` prints "Exception ignored in: <function
Cell.__del__> ... AttributeError: 'NoneType' object has no attribute
'total_instance_count'" — dozens of lines after an audit in a script, a CLI run or a test
session, and nothing is wrong. Once graphaudit has imported MindSpore it registers, at exit,
a guard around ``Cell.__del__`` that ignores exactly that failure; before exit nothing
changes.

A second exit problem is in MindSpore's C++: a static object of ``_c_expression`` holds a
reference to the ``numpy`` module and drops it in a C++ exit handler, after the interpreter
has been finalized. If that is numpy's last reference, ``module_dealloc`` runs without an
interpreter and the process dies with SIGSEGV (exit code 139) after everything has passed.
Usually some other object the finalization leaves alive still references numpy and hides it;
which objects those are depends on what ran before (a test session in another order crashed
and its file order did not). So graphaudit keeps one reference to numpy of its own, never
released: numpy is then never freed after finalization, as it is not freed in any process
that does not crash.

Example:
    >>> import atexit
    >>> from mindspore import nn
    >>> guard_cell_teardown()  # idempotent: registered once per process
    >>> nn.Cell.__del__.__name__
    '__del__'
"""

from __future__ import annotations

import atexit
import ctypes
import functools
import sys
from typing import Any

__all__ = ["guard_cell_teardown"]


def _guard() -> None:
    from mindspore import nn

    original = nn.Cell.__del__
    if getattr(original, "_graphaudit_guard", False):
        return

    @functools.wraps(original)
    def __del__(self: Any) -> None:
        try:
            original(self)
        except (AttributeError, TypeError):  # module globals already cleared by the shutdown
            pass

    __del__._graphaudit_guard = True  # type: ignore[attr-defined]
    nn.Cell.__del__ = __del__  # type: ignore[method-assign]


def _keep_numpy_past_exit() -> None:
    numpy = sys.modules.get("numpy")
    if numpy is not None:  # MindSpore imports it first thing; nothing to keep otherwise
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(numpy))


@functools.cache
def guard_cell_teardown() -> None:
    """Register, once, the exit-time guard and keep numpy alive (see the module docstring)."""
    atexit.register(_guard)
    _keep_numpy_past_exit()

"""Compilation: what the user compiles with ``mindspore.jit``, and the network compiled in GRAPH_MODE.

:mod:`~graphaudit.capture.compilation.jit` runs ``@jit`` code as Python for the traced pass;
:mod:`~graphaudit.capture.compilation.graph_mode` compiles and compares;
:mod:`~graphaudit.capture.compilation.failure_source` finds the cell and line a compile failure
comes from.
"""

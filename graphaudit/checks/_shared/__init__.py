"""Helpers that several checks share; no check module imports another check module.

- :mod:`~graphaudit.checks._shared.cells`: containers, BatchNorms, Dropouts and their modes;
- :mod:`~graphaudit.checks._shared.sharing`: tied parameters, a parameter's node;
- :mod:`~graphaudit.checks._shared.calls`: cells the traced pass never reached;
- :mod:`~graphaudit.checks._shared.grouping`: one finding per cause, for many parameters;
- :mod:`~graphaudit.checks._shared.patterns`: declared names and paths that match nothing;
- :mod:`~graphaudit.checks._shared.outputs`: what makes the network's output;
- :mod:`~graphaudit.checks._shared.lossflow`: what the loss wants, and whether the two agree;
- :mod:`~graphaudit.checks._shared.weights`: weight matrices and their values.
"""

"""The dependency probe: what an output depends on, found by running the network on changed batches.

:mod:`~graphaudit.capture.dependency.plan` chooses the changes and reads what moved (NumPy only);
:mod:`~graphaudit.capture.dependency.passes` runs the passes;
:mod:`~graphaudit.capture.dependency.probe` puts them together.
"""

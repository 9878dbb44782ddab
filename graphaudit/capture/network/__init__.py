"""The network itself: its structure, one traced forward pass, and leaving it as it was found.

:mod:`~graphaudit.capture.network.structure` walks cells and parameters;
:mod:`~graphaudit.capture.network.recorder` records a pass fed by the
:mod:`~graphaudit.capture.network.wrappers` that :mod:`~graphaudit.capture.network.patching`
installs; :mod:`~graphaudit.capture.network.isolation` restores what a pass wrote;
:mod:`~graphaudit.capture.network.session` ties them into one isolated capture.
"""

"""Training steps and what they use: the loss, the optimizer, its schedules, the loss scale.

:mod:`~graphaudit.capture.training.probe_steps` runs and measures the probe's real steps, with
:mod:`~graphaudit.capture.training.step_harness` (what a step may run, keeps and how it fails)
and :mod:`~graphaudit.capture.training.step_readings` (the numbers read from it);
:mod:`~graphaudit.capture.training.unwrap` finds the network, loss and optimizer inside a
training wrapper.
"""

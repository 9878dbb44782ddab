"""The probe step's public name: :mod:`graphaudit.runner.probe` (``run_probe``, ``ProbeResult``).

The probe's checks run through the one runner (:func:`graphaudit.runner.run_checks`); this
module keeps ``from graphaudit.probe import run_probe`` working.

Example:
    >>> import graphaudit.probe, graphaudit.runner.probe
    >>> graphaudit.probe.run_probe is graphaudit.runner.probe.run_probe
    True
"""

from graphaudit.runner.probe import (
    PROBE_CHECKS,
    ParameterProbe,
    ProbeInputError,
    ProbeResult,
    ProbeStepError,
    optimizer_state_parameters,
    run_probe,
)

__all__ = [
    "PROBE_CHECKS",
    "ParameterProbe",
    "ProbeInputError",
    "ProbeResult",
    "ProbeStepError",
    "optimizer_state_parameters",
    "run_probe",
]

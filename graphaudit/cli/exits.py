"""The exit codes of ``graphaudit`` (``docs/cli.md``, and the epilog of every ``--help``)."""

from __future__ import annotations

__all__ = ["EPILOG", "EXIT_CLEAN", "EXIT_FINDINGS", "EXIT_FORWARD", "EXIT_INTERNAL", "EXIT_USAGE"]

EXIT_CLEAN = 0  #: no finding at or above the --fail-on level (or the command succeeded)
EXIT_FINDINGS = 1  #: findings at or above the --fail-on level (compare: fingerprints that differ)
EXIT_USAGE = 2  #: bad command line or bad input: factory not found, bad shape text, spec errors...
EXIT_FORWARD = 3  #: the network failed to run (a ForwardError)
EXIT_INTERNAL = 4  #: a bug in graphaudit itself (the traceback is printed)

EPILOG = f"""exit codes:
  {EXIT_CLEAN}  clean: no finding at or above the --fail-on level (or the command succeeded)
  {EXIT_FINDINGS}  findings at or above the --fail-on level (compare: weights not identical)
  {EXIT_USAGE}  usage error or bad input: factory not found, bad shape text, spec file errors...
  {EXIT_FORWARD}  the network failed to run (its forward pass raised)
  {EXIT_INTERNAL}  internal error in graphaudit (please report it, with the traceback)"""

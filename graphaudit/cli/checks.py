"""``graphaudit checks [ID]``: list the checks, or print one check's documentation.

Reads the checks' declarations only: nothing here imports MindSpore.
"""

from __future__ import annotations

import argparse
import inspect
from typing import Any

from graphaudit.cli.exits import EXIT_CLEAN
from graphaudit.cli.output import write
from graphaudit.errors import CLIError

__all__ = ["add_parser", "check_list", "check_page", "run"]


def add_parser(commands: Any, formatter: Any, epilog: str) -> None:
    checks = commands.add_parser(
        "checks",
        help="list the checks, or show one check's documentation",
        description="List every check (ID, name, severity, family, what it needs), or print the full "
        "documentation of one.",
        epilog=epilog,
        formatter_class=formatter,
    )
    checks.add_argument("check", nargs="?", metavar="ID", help="a check ID (GA201) or name to document")
    checks.set_defaults(handler=run)


def _find_check(key: str) -> Any:
    from graphaudit.checks import all_checks, find_check

    check = find_check(key)
    if check is None:
        raise CLIError(
            f"no check {key!r}; the checks are {', '.join(all_checks())} (list them with `graphaudit checks`)"
        )
    return check


def _needs_text(check: Any) -> str:
    if not check.needs:
        return "needs only the network"
    return "needs " + "; ".join(f"{kind.title} ({kind.requirement.cli})" for kind in check.needs)


def check_page(key: str) -> str:
    """The documentation of the check whose ID or name is *key*, headed by its declaration."""
    check = _find_check(key)
    severities = check.severity + (f" (also {', '.join(check.also)})" if check.also else "")
    lines = [
        f"{check.check_id} {check.name}",
        f"family: {check.family}; severity: {severities}; {_needs_text(check)}",
        "",
        inspect.cleandoc(check.doc),
    ]
    return "\n".join(lines)


def check_list() -> str:
    """One row per check: ID, name, severity, family and what it needs on the command line."""
    from graphaudit.checks import all_checks

    checks = list(all_checks().values())
    width = max([len(c.name) for c in checks] + [4])
    family = max(len(c.family) for c in checks)
    lines = [f"{'ID':<6} {'name':<{width}}  {'severity':<8}  {'family':<{family}}  needs"]
    for check in checks:
        needs = ", ".join(kind.requirement.cli for kind in check.needs) or "-"
        lines.append(
            f"{check.check_id:<6} {check.name:<{width}}  {check.severity:<8}  {check.family:<{family}}  {needs}"
        )
    lines += ["", "`graphaudit checks ID` shows a check's documentation."]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.check:
        write(check_page(args.check), None, "check documentation")
    else:
        write(check_list(), None, "list of checks")
    return EXIT_CLEAN

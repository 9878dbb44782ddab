"""``graphaudit checks [ID]``: list the checks, or print one check's documentation.

Reads the checks' declarations only: nothing here imports MindSpore.
"""

from __future__ import annotations

import argparse
import inspect
import textwrap
from typing import Any

from graphaudit.cli.exits import EXIT_CLEAN
from graphaudit.cli.output import write
from graphaudit.errors import CLIError

__all__ = ["add_parser", "check_list", "check_page", "run"]


def add_parser(commands: Any, formatter: Any, epilog: str) -> None:
    checks = commands.add_parser(
        "checks",
        help="list the checks, or show one check's documentation",
        description="List every check by family (ID, name, severity, the evidence it needs), or print "
        "the full documentation of one (with the options that give what it needs).",
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
    uses = check.uses
    also = (
        ("; uses, when given, " + "; ".join(f"{k.title} ({k.requirement.cli})" for k in uses)) if uses else ""
    )
    if not check.needs:
        return "needs only the network" + also
    return "needs " + "; ".join(f"{kind.title} ({kind.requirement.cli})" for kind in check.needs) + also


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


WIDTH = 100  # a terminal's width, as ruff's and pytest's listings keep to


def check_list() -> str:
    """The checks by family, one row each: ID, name, severity, and the evidence it needs.

    The rows fit :data:`WIDTH` columns; what each piece of evidence asks for on the command
    line is on the check's own page (``graphaudit checks ID``).
    """
    from graphaudit.checks import all_checks, by_family, id_span

    checks = list(all_checks().values())
    name_width = max(len(c.name) for c in checks)
    indent = " " * (2 + 6 + 1 + name_width + 2 + 8 + 2)
    lines: list[str] = []
    for family, members in by_family(checks).items():
        lines += [f"{id_span(members)}: {family}"]
        for check in members:
            row = f"  {check.check_id:<6} {check.name:<{name_width}}  {check.severity:<8}  "
            needs = ", ".join(kind.title for kind in check.needs) or "the network only"
            wrapped = textwrap.wrap(needs, WIDTH - len(indent)) or [""]
            lines.append(row + wrapped[0])
            lines += [indent + more for more in wrapped[1:]]
        lines.append("")
    lines.append("`graphaudit checks ID` shows a check's documentation and what to pass for it.")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    if args.check:
        write(check_page(args.check), None, "check documentation")
    else:
        write(check_list(), None, "list of checks")
    return EXIT_CLEAN

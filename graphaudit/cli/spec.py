"""``graphaudit spec snapshot MODULE:FACTORY``: write the design of a network known to be right."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from graphaudit.cli.exits import EXIT_CLEAN
from graphaudit.cli.output import write
from graphaudit.cli.targets import data_inputs, load_target, unwrapped
from graphaudit.errors import CLIError
from graphaudit.findings import printable

__all__ = ["add_parser", "run_snapshot"]


def add_parser(commands: Any, formatter: Any, epilog: str, add_target_options: Any) -> None:
    spec = commands.add_parser(
        "spec",
        help="work with design specs (snapshot)",
        description="Design specs: the declared design a network must keep (docs/spec.md).",
        epilog=epilog,
        formatter_class=formatter,
    )
    spec_commands = spec.add_subparsers(dest="spec_command", metavar="SPEC_COMMAND")
    spec_commands.required = True
    snapshot = spec_commands.add_parser(
        "snapshot",
        help="write the design of a network known to be right as a spec file",
        description="Snapshot the design of a network known to be right (Spec.from_net) as TOML.",
        epilog=epilog,
        formatter_class=formatter,
    )
    add_target_options(snapshot)
    snapshot.add_argument(
        "--output", "-o", metavar="FILE.toml", help="the spec file to write (default: stdout)"
    )
    snapshot.add_argument(
        "--depth",
        type=int,
        default=1,
        metavar="N",
        help="record the connections among the cells N levels down (default: %(default)s: the children)",
    )
    snapshot.set_defaults(handler=run_snapshot)


def run_snapshot(args: argparse.Namespace) -> int:
    from graphaudit.capture import check_cell
    from graphaudit.spec import Spec

    target = load_target(args.target)
    net = check_cell(unwrapped(target).net, function="graphaudit spec snapshot")
    spec = Spec.from_net(net, data_inputs(args.input, args.seed, target), depth=args.depth)
    if args.output is None or args.output == "-":
        write(spec.to_toml(), None, "spec")
        return EXIT_CLEAN
    try:
        spec.save(args.output)
    except OSError as err:
        raise CLIError(f"cannot write the spec to {args.output}: {err}") from err
    print(printable(f"graphaudit: wrote the design spec to {args.output}"), file=sys.stderr)
    return EXIT_CLEAN

"""The ``graphaudit`` command line (also ``python -m graphaudit``).

::

    graphaudit audit MODULE:FACTORY [--input 1x3x224x224:float32 ...] [--label 1:int32]
                     [--optimizer MODULE:FACTORY] [--spec design.toml] [--probe] [--peers rank1.json ...]
                     [--format text|json|sarif] [--output PATH] [--fail-on error|warning|never]
                     [--svg PATH] [--html PATH]
    graphaudit render MODULE:FACTORY [--input ...] -o graph.svg [--format svg|png|pdf|dot|html] [--depth N]
    graphaudit checks [ID]
    graphaudit spec snapshot MODULE:FACTORY [--input ...] [-o design.toml] [--depth N]
    graphaudit compare rank0.json rank1.json ... [--format text|json] [-o PATH]

One module per command (:mod:`~graphaudit.cli.audit`, :mod:`~graphaudit.cli.render`,
:mod:`~graphaudit.cli.checks`, :mod:`~graphaudit.cli.spec`, :mod:`~graphaudit.cli.compare`);
:mod:`~graphaudit.cli.targets` loads ``MODULE:FACTORY`` (see :func:`load_target`) and makes the
input tensors. The exit codes are :data:`EXIT_CLEAN` (0), :data:`EXIT_FINDINGS` (1),
:data:`EXIT_USAGE` (2), :data:`EXIT_FORWARD` (3) and :data:`EXIT_INTERNAL` (4);
``docs/cli.md`` documents it all. ``--help``, ``--version`` and ``checks`` do not import
MindSpore.

Example:
    >>> parse_tensor_spec("1x3x224x224:float16")
    ((1, 3, 224, 224), 'float16')
    >>> build_parser().parse_args(["checks", "GA201"]).check
    'GA201'
"""

from __future__ import annotations

import argparse
import sys
import traceback
from collections.abc import Sequence
from typing import NoReturn

from graphaudit.cli import audit, checks, compare, render, spec
from graphaudit.cli.exits import EPILOG, EXIT_CLEAN, EXIT_FINDINGS, EXIT_FORWARD, EXIT_INTERNAL, EXIT_USAGE
from graphaudit.cli.targets import Target, load_target, make_tensor, parse_tensor_spec, tensor_spec_arg
from graphaudit.errors import CLIError, ForwardError, GraphAuditError
from graphaudit.findings import printable
from graphaudit.version import __version__

__all__ = [
    "EXIT_CLEAN",
    "EXIT_FINDINGS",
    "EXIT_FORWARD",
    "EXIT_INTERNAL",
    "EXIT_USAGE",
    "CLIError",
    "Target",
    "build_parser",
    "load_target",
    "main",
    "make_tensor",
    "parse_tensor_spec",
]

_TARGET_HELP = (
    "the network: MODULE:FACTORY, MODULE an importable module (mypkg.models) or a .py file "
    "(models/net.py), FACTORY a function or class returning the network, (net, optimizer[, loss_fn]) "
    "or {'net': ..., 'optimizer': ..., 'loss_fn': ..., 'inputs': ..., 'spec': ...}"
)


def _add_target_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("target", metavar="MODULE:FACTORY", help=_TARGET_HELP)
    parser.add_argument(
        "--input",
        metavar="SHAPE[:DTYPE]",
        action="append",
        type=tensor_spec_arg,
        default=[],
        help="one input of the forward pass, a deterministic random tensor (e.g. 1x3x224x224:float32; "
        "dtype float32 by default); repeat for several inputs, in construct() order. "
        "Replaces the factory's own 'inputs'.",
    )
    parser.add_argument(
        "--seed",
        type=int,
        default=0,
        metavar="N",
        help="seed of the random input tensors (default: %(default)s)",
    )


class _Parser(argparse.ArgumentParser):
    """An argument parser whose usage errors are one line and a hint, as ruff's and pytest's are.

    argparse prints the whole usage block (16 lines for ``audit``) before the error; the
    block is what ``--help`` is for. Sub-command parsers are made of the same class.
    """

    def error(self, message: str) -> NoReturn:
        self.exit(EXIT_USAGE, f"{self.prog}: error: {message}\nFor the options: {self.prog} --help\n")


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def build_parser() -> argparse.ArgumentParser:
    """The ``graphaudit`` argument parser (``audit``'s evidence options come from the declarations)."""
    parser = _Parser(
        prog="graphaudit",
        description="Find the silent structural accuracy bugs of MindSpore networks.",
        epilog=EPILOG + "\n\nSee docs/cli.md for every command and option.",
        formatter_class=_formatter,
    )
    parser.add_argument("--version", action="version", version=f"graphaudit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True
    audit.add_parser(commands, _formatter, EPILOG, _add_target_options)
    render.add_parser(commands, _formatter, EPILOG, _add_target_options)
    checks.add_parser(commands, _formatter, EPILOG)
    spec.add_parser(commands, _formatter, EPILOG, _add_target_options)
    compare.add_parser(commands, _formatter, EPILOG)
    return parser


def _quiet_cell_teardown() -> None:
    """Keep MindSpore's ``Cell.__del__`` quiet at interpreter exit (see :mod:`graphaudit.capture.network.shutdown`).

    Cells still alive when the interpreter clears module globals (a network kept by a module,
    by MindSpore's own caches) would each print "Exception ignored in: Cell.__del__ ...
    'NoneType' object has no attribute 'total_instance_count'". Registered only once MindSpore
    is imported, so the light commands stay light.
    """
    if "mindspore" in sys.modules:
        from graphaudit.capture.network.shutdown import guard_cell_teardown

        guard_cell_teardown()


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line with *argv* (default ``sys.argv[1:]``); return the exit code."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:  # --help, --version, or a usage error (argparse printed it)
        code = exit_.code
        return code if isinstance(code, int) else (EXIT_CLEAN if code is None else EXIT_USAGE)
    try:
        return args.handler(args)
    except ForwardError as err:
        print(
            printable(f"graphaudit: error: the network failed to run: {err.text('cli')}", newlines=True),
            file=sys.stderr,
        )
        return EXIT_FORWARD
    except GraphAuditError as err:
        print(printable(f"graphaudit: error: {err.text('cli')}", newlines=True), file=sys.stderr)
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("graphaudit: interrupted", file=sys.stderr)
        return 130
    except Exception:
        traceback.print_exc()
        print(
            "graphaudit: internal error: this is a bug in graphaudit; please report it with the traceback above",
            file=sys.stderr,
        )
        return EXIT_INTERNAL
    finally:
        _quiet_cell_teardown()

"""``graphaudit render MODULE:FACTORY -o PATH``: draw the captured graph, without an audit.

The format is ``--format``, else the suffix of ``-o``; a suffix that names no format is a
usage error (exit 2) rather than a file whose content its name belies.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from graphaudit.cli.exits import EXIT_CLEAN
from graphaudit.cli.output import DRAWING_FORMATS, check_writable, drawing_format, render_module
from graphaudit.cli.targets import data_inputs, load_target, unwrapped
from graphaudit.errors import CLIError
from graphaudit.findings import printable

__all__ = ["add_parser", "run"]


def add_parser(commands: Any, formatter: Any, epilog: str, add_target_options: Any) -> None:
    render = commands.add_parser(
        "render",
        help="draw a network's graph (no audit)",
        description="Capture the network (and, with --input, one forward pass) and draw its graph.",
        epilog=epilog,
        formatter_class=formatter,
    )
    add_target_options(render)
    render.add_argument(
        "--output", "-o", metavar="PATH", required=True, help="the file to write (e.g. graph.svg)"
    )
    render.add_argument(
        "--format",
        choices=DRAWING_FORMATS,
        help="the drawing's format (default: from the suffix of --output: .svg, .png, .pdf, .dot/.gv, "
        ".html/.htm; any other suffix needs --format)",
    )
    render.add_argument(
        "--depth", type=int, metavar="N", help="collapse the cells deeper than N levels into one box each"
    )
    render.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from graphaudit.capture import capture, check_cell

    fmt = drawing_format(args.output, args.format, "--output")  # before the capture: fail fast
    target = load_target(args.target)
    net = check_cell(unwrapped(target).net, function="graphaudit render")
    graph = capture(net, data_inputs(args.input, args.seed, target))[0]
    render = render_module()
    check_writable(args.output, "--output")
    try:
        written = render.render_graph(graph, args.output, format=fmt, depth=args.depth)
    except OSError as err:
        raise CLIError(f"cannot write {args.output}: {err}") from err
    print(printable(f"graphaudit: wrote the drawing to {written}"), file=sys.stderr)
    return EXIT_CLEAN

"""``graphaudit compare rank0.json rank1.json ...``: are the ranks' weights identical?

Parses and prints only: the comparison and its text and JSON forms are
:class:`graphaudit.report.compare.Comparison`.
"""

from __future__ import annotations

import argparse
from typing import Any

from graphaudit.cli.exits import EXIT_CLEAN, EXIT_FINDINGS
from graphaudit.cli.output import write
from graphaudit.errors import CLIError

__all__ = ["add_parser", "run"]


def add_parser(commands: Any, formatter: Any, epilog: str) -> None:
    compare = commands.add_parser(
        "compare",
        help="compare the weight fingerprints of the ranks of a data-parallel job",
        description="Compare fingerprint files written on each rank with "
        "graphaudit.fingerprint.fingerprint(net).save(PATH) (docs/distributed.md): exit 0 when every "
        "parameter is identical, 1 when some differ or are missing on some ranks, 2 for unreadable files.",
        epilog=epilog,
        formatter_class=formatter,
    )
    compare.add_argument("files", nargs="+", metavar="FINGERPRINT.json", help="one fingerprint file per rank")
    compare.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )
    compare.add_argument("--output", "-o", metavar="PATH", help="write the result there instead of to stdout")
    compare.set_defaults(handler=run)


def run(args: argparse.Namespace) -> int:
    from graphaudit.distributed.fingerprint import Fingerprint
    from graphaudit.fingerprint import compare
    from graphaudit.report.compare import Comparison

    if len(args.files) < 2:
        raise CLIError(
            f"compare needs at least two fingerprint files (one per rank), got {len(args.files)}: "
            "write one on each rank with graphaudit.fingerprint.fingerprint(net).save(f'rank{rank}.json')"
        )
    fingerprints = [Fingerprint.load(path) for path in args.files]
    comparison = Comparison(tuple(fingerprints), tuple(compare(fingerprints)))
    write(comparison.to_json() if args.format == "json" else comparison.text(), args.output, "comparison")
    return EXIT_CLEAN if comparison.identical else EXIT_FINDINGS

"""``graphaudit audit MODULE:FACTORY``: run every check, print the report, optionally draw it.

The options that feed evidence come from the evidence kinds' declarations
(:func:`graphaudit.evidence.all_options`): each :class:`~graphaudit.evidence.Option` with a
``flag`` is an option of ``graphaudit audit``, its text converted by its ``cli_value`` and
passed to :func:`graphaudit.audit` under the option's name. A new kind of evidence gets its
flag with no edit here.

Example:
    >>> parser = argparse.ArgumentParser(prog="audit")
    >>> added = add_evidence_options(parser)
    >>> "--peers" in [option.flag for option in added]
    True
    >>> evidence_keywords(parser.parse_args(["--peers", "rank1.json", "rank2.json"]), added)["peers"]
    ['rank1.json', 'rank2.json']
    >>> evidence_keywords(parser.parse_args([]), added)  # only what was given: audit()'s defaults apply
    {}
"""

from __future__ import annotations

import argparse
import functools
import json
import sys
from typing import Any

from graphaudit.cli.exits import EXIT_CLEAN, EXIT_FINDINGS
from graphaudit.cli.output import check_writable, render_module, write
from graphaudit.cli.targets import (
    as_tuple,
    build_reference,
    call,
    load_target,
    random_tensors,
    resolve_reference,
    tensor_spec_arg,
    unwrapped,
)
from graphaudit.errors import CLIError
from graphaudit.findings import FAIL_ON, printable

__all__ = ["add_evidence_options", "add_parser", "evidence_keywords", "run"]

#: ``--fail-on`` level → the severities that make the exit code 1.
#: How each ``Option.cli_value`` is read from the command line (argparse keywords).
CLI_VALUES: dict[str, dict[str, Any]] = {
    "text": {},
    "paths": {"nargs": "+"},
    "reference": {},
    "flag": {"action": "store_true", "default": None},
}
_DEST = "evidence_option_"


def add_evidence_options(parser: argparse.ArgumentParser) -> list[Any]:
    """Add one option per declared evidence option with a ``flag``; return those options."""
    from graphaudit.evidence import all_options

    group = parser.add_argument_group("evidence", "options that feed further checks (graphaudit checks)")
    added = []
    for name, (kind, option) in all_options().items():
        if option.flag is None:
            continue
        if option.cli_value not in CLI_VALUES:
            raise TypeError(
                f"{kind.__name__} declares the option {name!r} with cli_value {option.cli_value!r}; "
                f"the command line reads {', '.join(CLI_VALUES)}"
            )
        extra = dict(CLI_VALUES[option.cli_value])
        if option.cli_value != "flag":
            extra["metavar"] = option.metavar
        if option.cli_value == "text":
            extra["type"] = option.from_text  # parsed by its declaration; argparse names the flag
        takes = option.describe()
        helptext = f"{option.help} ({takes})" if takes else option.help
        try:
            group.add_argument(option.flag, dest=_DEST + name, help=helptext, **extra)
        except argparse.ArgumentError as err:
            raise TypeError(
                f"{kind.__name__} declares the flag {option.flag} for {name!r}, which graphaudit audit "
                f"already has: {err}"
            ) from err
        added.append(option)
    return added


def evidence_keywords(args: argparse.Namespace, options: list[Any]) -> dict[str, Any]:
    """The :func:`graphaudit.audit` keywords of the evidence options given on the command line."""
    keywords: dict[str, Any] = {}
    for option in options:
        value = getattr(args, _DEST + option.name, None)
        if value is None:
            continue
        if option.cli_value == "reference":
            value = build_reference(value, option.flag)
        elif option.cli_value == "paths":
            value = [str(v) for v in value]
        keywords[option.name] = value
    return keywords


def _steps(text: str) -> int:
    """``--probe N``: a whole number of steps, at least 1."""
    try:
        steps = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--probe takes a number of steps, e.g. --probe 5, not {text!r}"
        ) from None
    if steps < 1:
        raise argparse.ArgumentTypeError(f"--probe takes at least 1 step, got {steps}")
    return steps


def add_parser(commands: Any, formatter: Any, epilog: str, add_target_options: Any) -> None:
    audit = commands.add_parser(
        "audit",
        help="run every check on a network and report the findings",
        description="Build the network with FACTORY, run every check on it, and print the report.",
        epilog=epilog,
        formatter_class=formatter,
    )
    add_target_options(audit)
    audit.add_argument(
        "--label",
        metavar="SHAPE[:DTYPE]",
        type=tensor_spec_arg,
        help="the label given to the loss (e.g. 2:int32); needs a loss: from the factory "
        "(net, optimizer, loss_fn), or a WithLossCell / TrainOneStepCell / Model",
    )
    audit.add_argument(
        "--optimizer",
        metavar="MODULE:FACTORY",
        help="a callable taking the network and returning its optimizer; replaces the factory's own",
    )
    audit.add_argument(
        "--spec", metavar="FILE.toml", help="the declared design to check against (docs/spec.md)"
    )
    audit.add_argument(
        "--probe",
        nargs="?",
        const=1,
        default=0,
        type=_steps,
        metavar="N",
        help="also run one real training step (--probe N: N steps on the batch, the loss curve and "
        "update ratios) and check its numbers (GA9xx; needs --input, --label, a loss and an optimizer; "
        "everything is restored afterwards)",
    )
    audit.add_argument(
        "--mode",
        choices=("train", "eval"),
        help="what the network is about to be used for (default: train when there is an optimizer, "
        "else as the network is set)",
    )
    audit.add_argument(
        "--format",
        choices=("text", "json", "sarif"),
        default="text",
        help="report format: text (default), json (schema graphaudit/report/schema/report.schema.json) "
        "or sarif (SARIF 2.1.0)",
    )
    audit.add_argument("--output", "-o", metavar="PATH", help="write the report there instead of to stdout")
    audit.add_argument(
        "--select",
        metavar="ID[,ID...]",
        action="append",
        help="report only these checks (IDs, prefixes such as GA2, or names; repeatable); replaces "
        "[tool.graphaudit] select",
    )
    audit.add_argument(
        "--ignore",
        metavar="ID[,ID...]",
        action="append",
        help="never report these checks (repeatable), on top of [tool.graphaudit] ignore; what is "
        "hidden is listed under SUPPRESSED",
    )
    config = audit.add_mutually_exclusive_group()
    config.add_argument(
        "--config",
        metavar="FILE.toml",
        help="read [tool.graphaudit] from FILE (default: the nearest pyproject.toml that has it)",
    )
    config.add_argument(
        "--no-config", action="store_true", help="read no [tool.graphaudit] table: report every check"
    )
    audit.add_argument(
        "--show-not-run",
        action="store_true",
        help="list the checks that did not run, with what each needs (text format; JSON and SARIF "
        "always list them)",
    )
    audit.add_argument(
        "--fail-on",
        choices=tuple(FAIL_ON),
        default="error",
        help="lowest severity that makes the exit code 1 (default: %(default)s; never: always 0)",
    )
    audit.add_argument("--svg", metavar="PATH", help="also draw the annotated graph as SVG to PATH")
    audit.add_argument("--html", metavar="PATH", help="also draw the annotated graph as an HTML page to PATH")
    audit.add_argument(
        "--depth",
        type=int,
        metavar="N",
        help="in the --svg/--html drawings, collapse cells deeper than N levels",
    )
    options = add_evidence_options(audit)
    audit.set_defaults(handler=functools.partial(run, evidence_options=options))


def _optimizer(args: argparse.Namespace, backbone: Any, given: Any) -> tuple[Any, Any]:
    """The optimizer to audit, and the ``--optimizer`` factory that built it (``None``: the factory's)."""
    if not args.optimizer:
        return given, None
    factory, _ = resolve_reference(args.optimizer, "--optimizer")
    if not callable(factory):
        raise CLIError(
            f"--optimizer {args.optimizer} is not callable: it must take the network, return an optimizer"
        )
    return call(factory, (backbone,), f"--optimizer {args.optimizer}"), factory


def run(args: argparse.Namespace, evidence_options: list[Any]) -> int:
    import graphaudit  # looked up when called: tests replace graphaudit.audit

    target = load_target(args.target)
    setup = unwrapped(target)
    optimizer, optimizer_factory = _optimizer(args, setup.net, target.optimizer)

    options = dict(target.options)
    made = random_tensors([*args.input, *([args.label] if args.label else [])], args.seed)
    inputs = tuple(made[: len(args.input)]) if args.input else target.inputs
    if args.label is not None:
        if inputs is None:
            raise CLIError("--label needs the data inputs too: give --input SHAPE[:DTYPE] for each of them")
        if not setup.takes_label and setup.loss_fn is None:
            raise CLIError(
                "--label needs a loss: make the factory return (net, optimizer, loss_fn), a dict with "
                "'loss_fn', or a nn.WithLossCell / nn.TrainOneStepCell / Model"
            )
        if not args.input and setup.takes_label and "label" not in options:
            inputs = as_tuple(inputs)[:-1]  # the factory's inputs of a wrapper end with its label: replaced
        options["label"] = made[-1]
    spec = target.spec
    if args.spec:
        from graphaudit.spec import Spec

        spec = Spec.load(args.spec)
    if args.mode is not None:
        options["mode"] = args.mode
    if args.probe:
        options["probe"] = True if args.probe == 1 else args.probe
    options.update(evidence_keywords(args, evidence_options))
    options.update(_configuration(args))
    report = graphaudit.audit(
        target.net, optimizer, inputs=inputs, loss_fn=target.loss_fn, spec=spec, **options
    )

    for path, fmt, option in ((args.svg, "svg", "--svg"), (args.html, "html", "--html")):
        if path:
            _draw(report, path, fmt, option, args.depth)
    if args.format == "json":
        text = report.to_json()
    elif args.format == "sarif":
        text = _sarif(
            report, target, optimizer if optimizer is not None else setup.optimizer, optimizer_factory
        )
    else:
        text = report.text(audience="cli", not_run=args.show_not_run)
    write(text, args.output, f"{args.format} report")
    return EXIT_FINDINGS if report.of_severity(*FAIL_ON[args.fail_on]) else EXIT_CLEAN


def _configuration(args: argparse.Namespace) -> dict[str, Any]:
    """The ``audit()`` keywords of ``--select``, ``--ignore``, ``--config`` and ``--no-config``."""
    keywords: dict[str, Any] = {}
    for flag in ("select", "ignore"):
        given = getattr(args, flag)
        if given:
            keywords[flag] = [entry.strip() for text in given for entry in text.split(",") if entry.strip()]
    if args.no_config:
        keywords["config"] = False
    elif args.config:
        keywords["config"] = args.config
    return keywords


def _sarif(report: Any, target: Any, optimizer: Any, optimizer_factory: Any) -> str:
    from graphaudit.report.sarif import to_sarif, uri_of

    log = to_sarif(
        report,
        artifact_uri=uri_of(target.source_file),
        start_line=target.source_line,
        locate=True,
        optimizer=optimizer,
        factories=[f for f in (optimizer_factory, target.factory) if f is not None],
    )
    return json.dumps(log, indent=2, ensure_ascii=False)


def _draw(report: Any, path: str, fmt: str, option: str, depth: int | None) -> None:
    render = render_module()
    check_writable(path, option)
    try:
        render.render_report(report, path, format=fmt, depth=depth)
    except OSError as err:
        raise CLIError(f"cannot write {option} {path}: {err}") from err
    print(printable(f"graphaudit: wrote the {fmt.upper()} rendering to {path}"), file=sys.stderr)

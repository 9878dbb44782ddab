"""The ``graphaudit`` command line (also ``python -m graphaudit``).

::

    graphaudit audit MODULE:FACTORY [--input 1x3x224x224:float32 ...] [--label 1:int32]
                     [--optimizer MODULE:FACTORY] [--spec design.toml]
                     [--format text|json|sarif] [--output PATH] [--fail-on error|warning|never]
                     [--svg PATH] [--html PATH]
    graphaudit render MODULE:FACTORY [--input ...] -o graph.svg [--depth N]
    graphaudit checks [ID]
    graphaudit spec snapshot MODULE:FACTORY [--input ...] [-o design.toml] [--depth N]
    graphaudit compare rank0.json rank1.json ... [--format text|json] [-o PATH]

``MODULE`` is an importable module (``mypkg.models``) or the path of a ``.py`` file;
``FACTORY`` names what in it builds the network (see :func:`load_target`). The exit codes are
:data:`EXIT_CLEAN` (0), :data:`EXIT_FINDINGS` (1), :data:`EXIT_USAGE` (2),
:data:`EXIT_FORWARD` (3) and :data:`EXIT_INTERNAL` (4); ``docs/cli.md`` documents it all.

Example:
    >>> parse_tensor_spec("1x3x224x224:float16")
    ((1, 3, 224, 224), 'float16')
    >>> parse_tensor_spec("8")
    ((8,), 'float32')
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import inspect
import json
import os
import re
import sys
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any, TextIO

from graphaudit.errors import CLIError, ForwardError, GraphAuditError
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

EXIT_CLEAN = 0  #: no finding at or above the --fail-on level
EXIT_FINDINGS = 1  #: findings at or above the --fail-on level
EXIT_USAGE = 2  #: bad command line or bad input: factory not found, bad shape text, spec errors...
EXIT_FORWARD = 3  #: the network failed to run (a ForwardError)
EXIT_INTERNAL = 4  #: a bug in graphaudit itself (the traceback is printed)

DTYPES = {
    "float16": "float16",
    "half": "float16",
    "float32": "float32",
    "float": "float32",
    "float64": "float64",
    "double": "float64",
    "int8": "int8",
    "int16": "int16",
    "int32": "int32",
    "int": "int32",
    "int64": "int64",
    "long": "int64",
    "uint8": "uint8",
    "bool": "bool",
}

_FAIL_ON = {"error": ("error",), "warning": ("error", "warning"), "never": ()}
_DIM = re.compile(r"^[1-9]\d*$")


# --------------------------------------------------------------------------- tensors


def parse_tensor_spec(text: str) -> tuple[tuple[int, ...], str]:
    """Parse ``SHAPE[:DTYPE]`` (``1x3x224x224:float32``; ``scalar`` for a 0-d tensor).

    Dimensions are positive integers separated by ``x`` (or ``,``); the dtype defaults to
    ``float32`` and is one of :data:`DTYPES`.

    Example:
        >>> parse_tensor_spec("2,10:int64")
        ((2, 10), 'int64')
        >>> parse_tensor_spec("1x0")
        Traceback (most recent call last):
        ...
        graphaudit.errors.CLIError: bad tensor shape '1x0': dimension '0' is not a positive integer (write e.g. 1x3x224x224:float32)
    """
    shape_text, _, dtype_text = text.strip().partition(":")
    dtype_text = dtype_text.strip().lower() or "float32"
    if dtype_text not in DTYPES:
        raise CLIError(
            f"bad tensor dtype {dtype_text!r} in {text!r}: use one of {', '.join(sorted(set(DTYPES.values())))}"
        )
    shape_text = shape_text.strip().lower()
    if shape_text in ("scalar", "()"):
        return (), DTYPES[dtype_text]
    if not shape_text:
        raise CLIError(f"bad tensor shape {text!r}: the shape is empty (write e.g. 1x3x224x224:float32)")
    dims = [d.strip() for d in re.split(r"[x,]", shape_text)]
    for dim in dims:
        if not _DIM.match(dim):
            raise CLIError(
                f"bad tensor shape {text!r}: dimension {dim!r} is not a positive integer "
                "(write e.g. 1x3x224x224:float32)"
            )
    return tuple(int(d) for d in dims), DTYPES[dtype_text]


def make_tensor(shape: tuple[int, ...], dtype: str, rng: Any) -> Any:
    """A deterministic random ``mindspore.Tensor``: floats uniform in [0, 1), integers 0 or 1.

    Example:
        >>> import numpy as np
        >>> t = make_tensor((2, 3), "int32", np.random.default_rng(0))
        >>> t.shape, str(t.dtype), set(t.asnumpy().ravel()) <= {0, 1}
        ((2, 3), 'Int32', True)
    """
    import numpy as np
    from mindspore import Tensor

    if dtype == "bool":
        array = rng.random(shape) < 0.5
    elif dtype.startswith(("int", "uint")):
        array = rng.integers(0, 2, size=shape).astype(dtype)
    else:
        array = rng.random(shape).astype(dtype)
    return Tensor(np.asarray(array))


def _tensor_spec_arg(text: str) -> tuple[tuple[int, ...], str]:
    try:
        return parse_tensor_spec(text)
    except CLIError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


# --------------------------------------------------------------------------- factories


@dataclass
class Target:
    """What a ``MODULE:FACTORY`` built, and where that factory is defined."""

    net: Any
    optimizer: Any = None
    loss_fn: Any = None
    inputs: Any = None
    spec: Any = None
    source_file: str | None = None
    source_line: int | None = None
    options: dict[str, Any] = field(default_factory=dict)  #: other keywords of graphaudit.audit (mode...)


def _target_keys() -> list[str]:
    """The keys a factory's dict may have: the parameters of :func:`graphaudit.audit` (and ``loss``)."""
    from graphaudit.runner import audit

    return [*inspect.signature(audit).parameters, "loss"]


def _describe(err: BaseException) -> str:
    """``TypeName: message (at file:line)``, the line being the innermost frame."""
    text = f"{type(err).__name__}: {err}".rstrip(": ")
    frames = traceback.extract_tb(err.__traceback__)
    if frames:
        text += f" (at {frames[-1].filename}:{frames[-1].lineno})"
    return text


def _split_reference(reference: str, option: str) -> tuple[str, str]:
    module, sep, attr = reference.rpartition(":")
    if not sep or not module or not attr or "/" in attr or "\\" in attr:
        raise CLIError(
            f"{option} {reference!r} is not MODULE:FACTORY: write the module (an importable name "
            "like mypkg.models, or a path like models/net.py), a colon, and the name of the "
            "function or class that builds it, e.g. models/net.py:build"
        )
    return module, attr


def _import_file(path: Path) -> ModuleType:
    if not path.is_file():
        raise CLIError(f"no such Python file: {path}")
    name = "_graphaudit_target_" + re.sub(r"\W", "_", str(path.resolve().with_suffix("")))
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise CLIError(f"cannot import {path}: not a Python source file")
    module = importlib.util.module_from_spec(spec)
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its neighbours, as `python file.py` would
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException as err:
        del sys.modules[name]
        if isinstance(err, (KeyboardInterrupt, SystemExit)):
            raise
        raise CLIError(f"importing {path} raised {_describe(err)}") from err
    return module


def _import_module(name: str) -> ModuleType:
    if os.getcwd() not in sys.path and "" not in sys.path:
        sys.path.insert(0, os.getcwd())  # `graphaudit audit pkg.mod:f` finds pkg in the current folder
    try:
        return importlib.import_module(name)
    except ModuleNotFoundError as err:
        if err.name and (name == err.name or name.startswith(err.name + ".")):
            raise CLIError(
                f"cannot import module {name!r}: {err}. Give a path to a .py file (models/net.py) or run "
                "graphaudit from the folder that holds the package."
            ) from err
        raise CLIError(f"importing {name} raised {_describe(err)}") from err
    except Exception as err:
        raise CLIError(f"importing {name} raised {_describe(err)}") from err


def _looks_like_path(module: str) -> bool:
    return module.endswith(".py") or "/" in module or "\\" in module or os.sep in module


def resolve_reference(reference: str, option: str = "MODULE:FACTORY") -> tuple[Any, ModuleType]:
    """The object named by ``MODULE:ATTR`` (``ATTR`` may be dotted), and its module."""
    module_text, attr = _split_reference(reference, option)
    module = _import_file(Path(module_text)) if _looks_like_path(module_text) else _import_module(module_text)
    obj: Any = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            defined = sorted(
                n
                for n, v in vars(module).items()
                if not n.startswith("_") and callable(v) and getattr(v, "__module__", None) == module.__name__
            )
            hint = f"; it defines {', '.join(defined)}" if defined else ""
            raise CLIError(f"{module_text} has no attribute {attr!r}{hint}") from None
    return obj, module


def _call(obj: Any, args: tuple[Any, ...], what: str) -> Any:
    try:
        inspect.signature(obj).bind(*args)
    except TypeError as err:
        raise CLIError(
            f"{what} cannot be called with {len(args)} argument(s): {err}. "
            + (
                "A network factory takes no arguments (give defaults to any it has)."
                if not args
                else "An optimizer factory takes the network as its only argument."
            )
        ) from err
    except ValueError:  # no signature (a builtin): just try
        pass
    try:
        return obj(*args)
    except GraphAuditError:
        raise
    except Exception as err:
        raise CLIError(f"calling {what} raised {_describe(err)}") from err


def _is_network(obj: Any) -> bool:
    from mindspore import nn

    return isinstance(obj, nn.Cell) or (type(obj).__name__ == "Model" and hasattr(obj, "_network"))


def _source_of(obj: Any, module: ModuleType) -> tuple[str | None, int | None]:
    for candidate in (obj, type(obj)):
        try:
            file = inspect.getsourcefile(candidate)
            line = inspect.getsourcelines(candidate)[1]
        except (OSError, TypeError):
            continue
        if file and os.path.exists(file):
            return file, max(line, 1)
    file = getattr(module, "__file__", None)
    return file, None


def load_target(reference: str) -> Target:
    """Import ``MODULE:FACTORY`` and build what it returns.

    ``FACTORY`` is a network (a ``nn.Cell`` object, or a ``Model``), a class or function
    called with no arguments that returns one, or returns ``(net, optimizer[, loss_fn])`` or a
    dict with the key ``net`` and any other argument of :func:`graphaudit.audit` (``optimizer``,
    ``loss_fn``, ``inputs``, ``spec``, ``mode``...).
    """
    target = _build_target(reference)
    got = target.net
    if isinstance(got, type):
        raise CLIError(
            f"{reference} gave the class {got.__name__}, not a network: return an instance, {got.__name__}(...)"
        )
    if not _is_network(got):
        raise CLIError(
            f"{reference} gave an object of type {type(got).__name__}, not a network: expected a "
            "mindspore.nn.Cell (or a WithLossCell, TrainOneStepCell or Model), or a class or function "
            "that returns one"
        )
    return target


def _build_target(reference: str) -> Target:
    obj, module = resolve_reference(reference)
    source_file, source_line = _source_of(obj, module)
    built = obj if _is_network(obj) or not callable(obj) else _call(obj, (), reference)
    if isinstance(built, dict):
        allowed = _target_keys()
        unknown = sorted(set(built) - set(allowed))
        if unknown or "net" not in built:
            problem = f"unknown keys {unknown}" if unknown else "no 'net' key"
            raise CLIError(
                f"{reference} returned a dict with {problem}; the keys allowed are 'net' (required) and "
                f"{', '.join(repr(k) for k in allowed if k != 'net')}: the arguments of graphaudit.audit()"
            )
        known = {"net", "optimizer", "loss_fn", "loss", "inputs", "spec"}
        return Target(
            built["net"],
            built.get("optimizer"),
            built.get("loss_fn", built.get("loss")),
            built.get("inputs"),
            built.get("spec"),
            source_file,
            source_line,
            {k: v for k, v in built.items() if k not in known},
        )
    if isinstance(built, (tuple, list)):
        if not 1 <= len(built) <= 3:
            raise CLIError(
                f"{reference} returned a {type(built).__name__} of {len(built)} values; return the network, "
                "(net, optimizer), (net, optimizer, loss_fn) or a dict {'net': ..., 'optimizer': ...}"
            )
        net, optimizer, loss_fn = (*built, None, None)[:3]
        return Target(net, optimizer, loss_fn, source_file=source_file, source_line=source_line)
    return Target(built, source_file=source_file, source_line=source_line)


def _backbone(target: Target) -> tuple[Any, Any, Any, bool]:
    from graphaudit.capture.unwrap import unwrap

    return unwrap(target.net, target.optimizer, target.loss_fn)


def _tensors(specs: Sequence[tuple[tuple[int, ...], str]], seed: int) -> list[Any]:
    import numpy as np

    rng = np.random.default_rng(seed)
    return [make_tensor(shape, dtype, rng) for shape, dtype in specs]


def _as_tuple(inputs: Any) -> tuple[Any, ...]:
    return tuple(inputs) if isinstance(inputs, (tuple, list)) else (inputs,)


def _data_inputs(args: argparse.Namespace, target: Target) -> Any:
    """The inputs of the backbone's forward pass (no label), for render and snapshot."""
    if args.input:
        return tuple(_tensors(args.input, args.seed))
    if target.inputs is None:
        return None
    takes_label = _backbone(target)[3]
    return _as_tuple(target.inputs)[:-1] if takes_label else target.inputs


def _artifact_uri(path: str | None) -> str | None:
    if path is None:
        return None
    resolved = Path(path).resolve()
    try:
        return resolved.relative_to(Path.cwd().resolve()).as_posix()
    except ValueError:
        return resolved.as_uri()


# --------------------------------------------------------------------------- output


def _write(text: str, output: str | None, stdout: TextIO, what: str) -> None:
    if not text.endswith("\n"):
        text += "\n"
    if output is None or output == "-":
        stdout.write(text)
        stdout.flush()
        return
    try:
        path = Path(output)
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise CLIError(f"cannot write the {what} to {output}: {err}") from err
    print(f"graphaudit: wrote the {what} to {output}", file=sys.stderr)


def _render_module() -> Any:
    try:
        return importlib.import_module("graphaudit.report.render")
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("graphaudit"):
            raise CLIError(
                "rendering is not available in this version of graphaudit (no graphaudit.report.render)"
            ) from err
        raise


def _check_writable(path: str, option: str) -> None:
    parent = Path(path).resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CLIError(f"{option} {path}: cannot create the folder {parent}: {err}") from err


def _render_report(report: Any, path: str, fmt: str, option: str, depth: int | None) -> None:
    render = _render_module()
    _check_writable(path, option)
    try:
        render.render_report(report, path, format=fmt, depth=depth)
    except OSError as err:
        raise CLIError(f"cannot write {option} {path}: {err}") from err
    print(f"graphaudit: wrote the {fmt.upper()} rendering to {path}", file=sys.stderr)


# --------------------------------------------------------------------------- commands


def _cmd_audit(args: argparse.Namespace) -> int:
    import graphaudit
    from graphaudit.spec import Spec

    target = load_target(args.target)
    net, optimizer, loss_fn = target.net, target.optimizer, target.loss_fn
    backbone, _, found_loss, takes_label = _backbone(target)

    if args.optimizer:
        factory, _ = resolve_reference(args.optimizer, "--optimizer")
        if not callable(factory):
            raise CLIError(
                f"--optimizer {args.optimizer} is not callable: it must take the network, return an optimizer"
            )
        optimizer = _call(factory, (backbone,), f"--optimizer {args.optimizer}")

    made = _tensors([*args.input, *([args.label] if args.label else [])], args.seed)
    inputs = tuple(made[: len(args.input)]) if args.input else target.inputs
    if args.label is not None:
        if inputs is None:
            raise CLIError("--label needs the data inputs too: give --input SHAPE[:DTYPE] for each of them")
        label = made[-1]
        if not takes_label:
            if found_loss is None:
                raise CLIError(
                    "--label needs a loss: make the factory return (net, optimizer, loss_fn), a dict with "
                    "'loss_fn', or a nn.WithLossCell / nn.TrainOneStepCell / Model"
                )
            from mindspore import nn

            net, loss_fn = nn.WithLossCell(backbone, found_loss), None
        inputs = (*_as_tuple(inputs), label)

    spec = target.spec
    if args.spec:
        spec = Spec.load(args.spec)

    options = dict(target.options)
    if args.mode is not None:
        options["mode"] = args.mode
    if args.probe:
        options["probe"] = True
    report = graphaudit.audit(net, optimizer, inputs=inputs, loss_fn=loss_fn, spec=spec, **options)

    if args.svg:
        _render_report(report, args.svg, "svg", "--svg", args.depth)
    if args.html:
        _render_report(report, args.html, "html", "--html", args.depth)

    if args.format == "json":
        text = report.to_json()
    elif args.format == "sarif":
        from graphaudit.report.sarif import to_sarif

        log = to_sarif(report, artifact_uri=_artifact_uri(target.source_file), start_line=target.source_line)
        text = json.dumps(log, indent=2, ensure_ascii=False)
    else:
        text = str(report)
    _write(text, args.output, sys.stdout, f"{args.format} report")
    failing = report.of_severity(*_FAIL_ON[args.fail_on])
    return EXIT_FINDINGS if failing else EXIT_CLEAN


def _cmd_render(args: argparse.Namespace) -> int:
    from graphaudit.capture import capture, check_cell

    target = load_target(args.target)
    net = check_cell(_backbone(target)[0], function="graphaudit render")
    graph = capture(net, _data_inputs(args, target))[0]
    render = _render_module()
    _check_writable(args.output, "--output")
    try:
        written = render.render_graph(graph, args.output, format=args.format, depth=args.depth)
    except OSError as err:
        raise CLIError(f"cannot write {args.output}: {err}") from err
    print(f"graphaudit: wrote the drawing to {written}", file=sys.stderr)
    return EXIT_CLEAN


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


def _cmd_checks(args: argparse.Namespace) -> int:
    from graphaudit.checks import all_checks

    if args.check:
        check = _find_check(args.check)
        severities = check.severity + (f" (also {', '.join(check.also)})" if check.also else "")
        lines = [
            f"{check.check_id} {check.name}",
            f"family: {check.family}; severity: {severities}; {_needs_text(check)}",
            "",
        ]
        lines.append(inspect.cleandoc(check.doc))
        _write("\n".join(lines), None, sys.stdout, "check documentation")
        return EXIT_CLEAN
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
    _write("\n".join(lines), None, sys.stdout, "list of checks")
    return EXIT_CLEAN


def _cmd_spec_snapshot(args: argparse.Namespace) -> int:
    from graphaudit.capture import check_cell
    from graphaudit.spec import Spec

    target = load_target(args.target)
    net = check_cell(_backbone(target)[0], function="graphaudit spec snapshot")
    spec = Spec.from_net(net, _data_inputs(args, target), depth=args.depth)
    if args.output is None or args.output == "-":
        _write(spec.to_toml(), None, sys.stdout, "spec")
        return EXIT_CLEAN
    try:
        spec.save(args.output)
    except OSError as err:
        raise CLIError(f"cannot write the spec to {args.output}: {err}") from err
    print(f"graphaudit: wrote the design spec to {args.output}", file=sys.stderr)
    return EXIT_CLEAN


def _cmd_compare(args: argparse.Namespace) -> int:
    from graphaudit.fingerprint import Fingerprint, compare

    if len(args.files) < 2:
        raise CLIError(
            f"compare needs at least two fingerprint files (one per rank), got {len(args.files)}: "
            "write one on each rank with graphaudit.fingerprint.fingerprint(net).save(f'rank{rank}.json')"
        )
    fingerprints = [Fingerprint.load(path) for path in args.files]
    findings = compare(fingerprints)
    differing = [f for f in findings if f.subject != "(world)"]
    names = {name for fp in fingerprints for name in fp.parameters}
    if args.format == "json":
        data = {
            "identical": not differing,
            "parameters": len(names),
            "fingerprints": [
                {
                    "file": fp.source,
                    "rank": fp.rank,
                    "world_size": fp.world_size,
                    "hostname": fp.hostname,
                    "network": fp.network,
                    "graphaudit_version": fp.version,
                    "parameters": len(fp.parameters),
                }
                for fp in fingerprints
            ],
            "findings": [f.to_dict() for f in findings],
        }
        text = json.dumps(data, indent=2, ensure_ascii=False)
    else:
        lines = [f"compared {len(fingerprints)} fingerprints of {len(names)} parameters:"]
        for fp in fingerprints:
            lines.append(
                f"  {fp.label}: {fp.source}  ({len(fp.parameters)} parameters of {fp.network or '?'}, "
                f"host {fp.hostname or '?'}, world size {fp.world_size if fp.world_size is not None else '?'})"
            )
        lines.append("")
        for finding in findings:
            lines.append(f"{finding.check_id} [{finding.severity}] {finding.subject}: {finding.message}")
            lines.append(f"    fix: {finding.fix}")
        if differing:
            lines.append(f"{len(differing)} parameter(s) not identical across the fingerprints.")
        else:
            lines.append(
                f"identical: every parameter has the same content in all {len(fingerprints)} fingerprints."
            )
        text = "\n".join(lines)
    _write(text, args.output, sys.stdout, "comparison")
    return EXIT_FINDINGS if differing else EXIT_CLEAN


# --------------------------------------------------------------------------- parser

_EPILOG = """exit codes:
  0  clean: no finding at or above the --fail-on level (or the command succeeded)
  1  findings at or above the --fail-on level
  2  usage error or bad input: factory not found, bad shape text, spec file errors...
  3  the network failed to run (its forward pass raised)
  4  internal error in graphaudit (please report it, with the traceback)"""

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
        type=_tensor_spec_arg,
        default=[],
        help="one input of the forward pass, a deterministic random tensor (e.g. 1x3x224x224:float32; "
        "dtype float32 by default); repeat for several inputs, in construct() order. "
        "Replaces the factory's own 'inputs'.",
    )
    parser.add_argument(
        "--seed", type=int, default=0, help="seed of the random input tensors (default: %(default)s)"
    )


def _formatter(prog: str) -> argparse.HelpFormatter:
    return argparse.RawDescriptionHelpFormatter(prog, max_help_position=32)


def build_parser() -> argparse.ArgumentParser:
    """The ``graphaudit`` argument parser."""
    parser = argparse.ArgumentParser(
        prog="graphaudit",
        description="Find the silent structural accuracy bugs of MindSpore networks.",
        epilog=_EPILOG + "\n\nSee docs/cli.md for every command and option.",
        formatter_class=_formatter,
    )
    parser.add_argument("--version", action="version", version=f"graphaudit {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")
    commands.required = True

    audit = commands.add_parser(
        "audit",
        help="run every check on a network and report the findings",
        description="Build the network with FACTORY, run every check on it, and print the report.",
        epilog=_EPILOG,
        formatter_class=_formatter,
    )
    _add_target_options(audit)
    audit.add_argument(
        "--label",
        metavar="SHAPE[:DTYPE]",
        type=_tensor_spec_arg,
        help="the label passed to the loss (e.g. 2:int32); needs a loss from the factory or a "
        "WithLossCell / TrainOneStepCell / Model",
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
        action="store_true",
        help="also run one real training step and check its numbers (GA9xx; needs --label, a loss "
        "and an optimizer; everything is restored afterwards)",
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
        help="report format: text (default), json (schema graphaudit/report/schema/report.schema.json) or sarif (SARIF 2.1.0)",
    )
    audit.add_argument("--output", "-o", metavar="PATH", help="write the report there instead of to stdout")
    audit.add_argument(
        "--fail-on",
        choices=tuple(_FAIL_ON),
        default="error",
        help="lowest severity that makes the exit code 1 (default: %(default)s; never: always 0)",
    )
    audit.add_argument("--svg", metavar="PATH", help="also render the annotated graph as SVG")
    audit.add_argument("--html", metavar="PATH", help="also render the annotated graph as an HTML page")
    audit.add_argument(
        "--depth",
        type=int,
        metavar="N",
        help="in the --svg/--html drawings, collapse cells deeper than N levels",
    )
    audit.set_defaults(handler=_cmd_audit)

    render = commands.add_parser(
        "render",
        help="draw a network's graph (no audit)",
        description="Capture the network (and, with --input, one forward pass) and draw its graph.",
        epilog=_EPILOG,
        formatter_class=_formatter,
    )
    _add_target_options(render)
    render.add_argument(
        "--output", "-o", metavar="PATH", required=True, help="the file to write (e.g. graph.svg)"
    )
    render.add_argument(
        "--format",
        choices=("svg", "png", "pdf", "dot", "html"),
        help="the drawing's format (default: from the suffix of --output, else svg)",
    )
    render.add_argument(
        "--depth", type=int, metavar="N", help="collapse the cells deeper than N levels into one box each"
    )
    render.set_defaults(handler=_cmd_render)

    checks = commands.add_parser(
        "checks",
        help="list the checks, or show one check's documentation",
        description="List every check (ID, name, family), or print the full documentation of one.",
        epilog=_EPILOG,
        formatter_class=_formatter,
    )
    checks.add_argument("check", nargs="?", metavar="ID", help="a check ID (GA201) or name to document")
    checks.set_defaults(handler=_cmd_checks)

    spec = commands.add_parser(
        "spec",
        help="work with design specs (snapshot)",
        description="Design specs: the declared design a network must keep (docs/spec.md).",
        epilog=_EPILOG,
        formatter_class=_formatter,
    )
    spec_commands = spec.add_subparsers(dest="spec_command", metavar="SPEC_COMMAND")
    spec_commands.required = True
    snapshot = spec_commands.add_parser(
        "snapshot",
        help="write the design of a network known to be right as a spec file",
        description="Snapshot the design of a network known to be right (Spec.from_net) as TOML.",
        epilog=_EPILOG,
        formatter_class=_formatter,
    )
    _add_target_options(snapshot)
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
    snapshot.set_defaults(handler=_cmd_spec_snapshot)

    compare = commands.add_parser(
        "compare",
        help="compare the weight fingerprints of the ranks of a data-parallel job",
        description="Compare fingerprint files written on each rank with "
        "graphaudit.fingerprint.fingerprint(net).save(PATH) (docs/distributed.md): exit 0 when every "
        "parameter is identical, 1 when some differ or are missing on some ranks, 2 for unreadable files.",
        epilog=_EPILOG,
        formatter_class=_formatter,
    )
    compare.add_argument("files", nargs="+", metavar="FINGERPRINT.json", help="one fingerprint file per rank")
    compare.add_argument(
        "--format", choices=("text", "json"), default="text", help="output format (default: %(default)s)"
    )
    compare.add_argument("--output", "-o", metavar="PATH", help="write the result there instead of to stdout")
    compare.set_defaults(handler=_cmd_compare)
    return parser


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
        print(f"graphaudit: error: the network failed to run: {err}", file=sys.stderr)
        return EXIT_FORWARD
    except GraphAuditError as err:
        print(f"graphaudit: error: {err}", file=sys.stderr)
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


if __name__ == "__main__":
    sys.exit(main())

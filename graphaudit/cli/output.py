"""Where the command line writes: stdout or a file, and drawings.

Example:
    >>> drawing_format("net.SVG", None, "--output")
    'svg'
    >>> drawing_format("net.txt", "dot", "--output")
    'dot'
    >>> drawing_format("net.txt", None, "--output")
    Traceback (most recent call last):
    ...
    graphaudit.errors.CLIError: --output net.txt: cannot tell what to draw from the suffix '.txt'; name the file .svg, .png, .pdf, .dot (.gv), .html (.htm), or give --format svg|png|pdf|dot|html
"""

from __future__ import annotations

import importlib
import sys
from pathlib import Path
from typing import Any, TextIO

from graphaudit.errors import CLIError
from graphaudit.findings import printable

__all__ = ["DRAWING_FORMATS", "check_writable", "drawing_format", "render_module", "write"]

#: What ``graphaudit render --format`` accepts: ``graphaudit.draw.FORMATS`` (kept here so that
#: ``--help`` does not import the drawing code; a test keeps the two equal).
DRAWING_FORMATS = ("svg", "png", "pdf", "dot", "html")
_SUFFIXES = {"gv": "dot", "htm": "html"}


def write(text: str, output: str | None, what: str, stdout: TextIO | None = None) -> None:
    """Print *text* (``output`` ``None`` or ``-``), or write it to the file *output*, creating its folder.

    Every non-printable character but the newline is escaped
    (:func:`~graphaudit.findings.printable`; a JSON, SARIF or TOML string reads its escape back
    as the same character): nothing written drives the terminal or reorders what it shows.
    """
    text = printable(text, newlines=True)
    if not text.endswith("\n"):
        text += "\n"
    if output is None or output == "-":
        stream = stdout if stdout is not None else sys.stdout
        stream.write(text)
        stream.flush()
        return
    try:
        path = Path(output)
        if path.parent and not path.parent.exists():
            path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    except OSError as err:
        raise CLIError(f"cannot write the {what} to {output}: {err}") from err
    print(printable(f"graphaudit: wrote the {what} to {output}"), file=sys.stderr)


def drawing_format(path: str, fmt: str | None, option: str) -> str:
    """The format to draw *path* in: *fmt* when given, else the one its suffix names.

    An unknown suffix without *fmt* is a :class:`CLIError` (``graphaudit.draw`` would
    raise a ``RenderError``): nothing is written in a format the file name does not say.
    """
    if fmt is not None:
        return fmt
    suffix = Path(path).suffix.lower().lstrip(".")
    found = _SUFFIXES.get(suffix, suffix)
    if found in DRAWING_FORMATS:
        return found
    named = ", ".join(f".{f}" + (f" (.{s})" if (s := _suffix_for(f)) else "") for f in DRAWING_FORMATS)
    what = f"the suffix '.{suffix}'" if suffix else "a name without a suffix"
    raise CLIError(
        f"{option} {path}: cannot tell what to draw from {what}; name the file {named}, "
        f"or give --format {'|'.join(DRAWING_FORMATS)}"
    )


def _suffix_for(fmt: str) -> str | None:
    return next((s for s, f in _SUFFIXES.items() if f == fmt), None)


def render_module() -> Any:
    """:mod:`graphaudit.report.render`, or a :class:`CLIError` when drawing is not available."""
    try:
        return importlib.import_module("graphaudit.report.render")
    except ModuleNotFoundError as err:
        if err.name and err.name.startswith("graphaudit"):
            raise CLIError(
                "rendering is not available in this version of graphaudit (no graphaudit.report.render)"
            ) from err
        raise


def check_writable(path: str, option: str) -> None:
    """Create the folder of *path*; a :class:`CLIError` naming *option* when that fails."""
    parent = Path(path).resolve().parent
    try:
        parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise CLIError(f"{option} {path}: cannot create the folder {parent}: {err}") from err

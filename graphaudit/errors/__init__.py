"""Every exception graphaudit raises, in one place.

Every error derives from :class:`GraphAuditError`, says what was wrong and what to do about
it, and chains the original error (``raise ... from``) when one exists, so the MindSpore
traceback is still one ``__cause__`` away. An argument of the wrong *type* raises an error
that is also a ``TypeError``; a wrong *value*, also a ``ValueError``.

Example:
    >>> import graphaudit
    >>> try:
    ...     graphaudit.to_networkx([1, 2, 3])
    ... except graphaudit.NotACellError as err:
    ...     print(type(err).__name__, isinstance(err, TypeError))
    NotACellError True
"""

from __future__ import annotations

import textwrap

__all__ = [
    "ArgumentError",
    "ArgumentTypeError",
    "AuditFailed",
    "BaselineError",
    "CLIError",
    "ExchangeError",
    "FingerprintError",
    "ForwardError",
    "GraphAuditError",
    "InputError",
    "InternalError",
    "NotACellError",
    "OptionError",
    "ProbeInputError",
    "ProbeStepError",
    "RenderError",
    "RenderTimeoutError",
    "SamplingError",
    "SpecError",
    "UndeclaredEvidenceError",
    "WatchFailed",
    "excerpt",
]


class GraphAuditError(Exception):
    """Base class of every error raised by graphaudit.

    An error whose advice names Python arguments (``label=y``) can also carry the same advice
    in the command line's words (``cli=``: "give --label SHAPE"); :meth:`text` picks one.

    Example:
        >>> err = GraphAuditError("needs a label: pass label=y", cli="needs a label: give --label SHAPE")
        >>> str(err), err.text("cli")
        ('needs a label: pass label=y', 'needs a label: give --label SHAPE')
    """

    def __init__(self, *args: object, cli: str | None = None) -> None:
        super().__init__(*args)
        self.cli = cli

    def text(self, audience: str = "python") -> str:
        """The message for ``"python"`` (``str(err)``) or for ``"cli"`` (its own wording, if any)."""
        return self.cli if audience == "cli" and self.cli is not None else str(self)


class ArgumentTypeError(GraphAuditError, TypeError):
    """An argument of a graphaudit function has the wrong type (an optimizer that is a list...)."""


class ArgumentError(GraphAuditError, ValueError):
    """An argument of a graphaudit function has a value it cannot take (``mode="test"``...)."""


class OptionError(ArgumentError, ArgumentTypeError):
    """An ``audit()`` option (or its command-line flag) given a value it cannot take.

    Both a ``ValueError`` and a ``TypeError``: ``total_steps="abc"`` is a wrong type in
    Python and a wrong value on the command line, where every value starts as text.
    """


class AuditFailed(GraphAuditError):
    """Training was stopped before its first step: the audit found problems. ``report`` holds them."""

    def __init__(self, report: object) -> None:
        self.report = report
        super().__init__(f"graphaudit stopped the training before its first step:\n{report}")


class SamplingError(GraphAuditError):
    """A data pipeline could not be sampled; the message says why, in one sentence.

    The dataset checks that need the sample are then not run, with this message as the reason.
    """


class WatchFailed(GraphAuditError):
    """A watchpoint fired at or above ``fail_on``: the training was stopped. ``report`` holds the findings."""

    def __init__(self, report: object, finding: object) -> None:
        self.report = report
        self.finding = finding
        super().__init__(f"graphaudit stopped the training: {finding}")


class NotACellError(ArgumentTypeError):
    """The object given where a ``mindspore.nn.Cell`` was expected is not one."""


class InputError(GraphAuditError, ValueError):
    """The ``inputs`` (or ``label``) given for the forward pass are not usable (type, count)."""


class ForwardError(GraphAuditError, RuntimeError):
    """The network's own ``construct`` raised while graphaudit ran a forward pass."""


class ProbeInputError(InputError):
    """The probe step cannot run: no loss, no label, or no optimizer to step."""


class ProbeStepError(ForwardError):
    """The probe's training step itself (forward, loss, gradients or optimizer) raised."""


class SpecError(GraphAuditError, ValueError):
    """A design spec (a TOML file, or a :class:`~graphaudit.spec.Spec`) is malformed.

    The message reads ``file:line: problem``; ``source``, ``line`` and ``problem`` hold the
    parts (``line`` is ``None`` when the spec did not come from a file).
    """

    def __init__(self, problem: str, *, source: str | None = None, line: int | None = None) -> None:
        self.problem = problem
        self.source = source
        self.line = line
        where = source or "<spec>"
        super().__init__(f"{where}:{line}: {problem}" if line is not None else f"{where}: {problem}")


class FingerprintError(GraphAuditError, ValueError):
    """A weight fingerprint file is missing, unreadable, or not a graphaudit fingerprint."""


class BaselineError(GraphAuditError, ValueError):
    """A watch's ``baseline=`` is missing, is not a watch's ``samples.jsonl``, or is of another network."""


class ExchangeError(GraphAuditError, RuntimeError):
    """The ranks' exchange (``AllGather``) failed: a rank did not join in time, or died."""


class RenderError(GraphAuditError, RuntimeError):
    """Drawing failed: Graphviz's ``dot`` is missing, failed, or the format is unknown."""


class RenderTimeoutError(RenderError):
    """``dot`` did not finish laying out the graph in time (it was stopped)."""


class CLIError(GraphAuditError):
    """A bad command line or bad input found by the command line itself (exit code 2)."""


class InternalError(GraphAuditError, RuntimeError):
    """A bug in graphaudit itself (a check that crashed); the message says which part failed."""


class UndeclaredEvidenceError(InternalError):
    """A check or an evidence producer read a kind of evidence it does not declare (a bug in it).

    ``reader`` names the check or producer, ``kind`` the evidence kind's class name.
    """

    def __init__(self, reader: str, kind: str, declared: tuple[str, ...], *, how: str = "get") -> None:
        self.reader = reader
        self.kind = kind
        listed = ", ".join(declared) or "none"
        where = "needs=" if how == "need" else "needs= or uses="
        if how == "request":
            super().__init__(
                f"{reader} read {kind}, which is not served to checks: what it reads from it must be "
                "evidence it declares (needs= or uses=), e.g. IntendedMode for the mode."
            )
            return
        super().__init__(
            f"{reader} read {kind} with {how}() but does not declare it in {where} (it declares: {listed}). "
            f"Declare it: needs=({kind},) when it cannot run without it, uses=({kind},) when it is optional."
        )


def excerpt(err: BaseException, *, lines: int = 12, indent: str = "    ") -> str:
    """The first *lines* lines of *err*'s message, indented, for quoting inside another message.

    Example:
        >>> print(excerpt(ValueError("first\\nsecond"), lines=1))
            first
    """
    text = "\n".join(explanation(err).splitlines()[:lines]) or "(the error has no message)"
    return textwrap.indent(text, indent)


def explanation(err: BaseException) -> str:
    """*err*'s message up to MindSpore's stack for framework developers, which is dropped.

    MindSpore ends its errors with a "C++ Call Stack: (For framework developers)" block of
    source locations inside MindSpore; the error itself keeps it, on the ``__cause__`` of the
    graphaudit error that quotes it.

    Example:
        >>> explanation(ValueError("For 'MatMul' ...\\n\\n-----\\n- C++ Call Stack: (For framework developers)\\n-----\\nmatmul.cc:200"))
        "For 'MatMul' ..."
    """
    kept = []
    for line in str(err).strip().splitlines():
        if "C++ Call Stack" in line:
            break
        kept.append(line)
    while kept and (not kept[-1].strip() or set(kept[-1].strip()) <= {"-"}):
        kept.pop()
    return "\n".join(kept)

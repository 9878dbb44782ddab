"""The checkpoint the network will load, matched as ``load_param_into_net`` matches it (GA604-GA606).

``audit(net, ..., checkpoint="pretrained.ckpt")`` (or the dict ``mindspore.load_checkpoint``
returns) reads the checkpoint's names, shapes and dtypes and plans the load with MindSpore's
own rules (:mod:`graphaudit.capture.checkpoint`), with ``strict_load=`` as it will be passed
(default ``False``, as in MindSpore). ``new_parameters=["head.*"]`` declares the parameters
the checkpoint is not meant to cover (a replaced head): glob patterns on parameter names or
attribute paths. Nothing is loaded into the network.

Example:
    >>> from mindspore import nn
    >>> from graphaudit.evidence import AuditRequest, EvidenceSet
    >>> net = nn.Dense(2, 2)
    >>> request = AuditRequest(net, options={"checkpoint": {"weight": net.weight}})
    >>> contents = EvidenceSet(request).need(CheckpointContents)
    >>> contents.plan.loaded, contents.plan.not_loaded
    ({'weight': 'weight'}, ['bias'])
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any

from graphaudit.errors import ArgumentTypeError, GraphAuditError
from graphaudit.evidence import AuditRequest, Evidence, EvidenceSet, Missing, Option, Requirement
from graphaudit.evidence.network import NetworkGraph

if TYPE_CHECKING:
    from graphaudit.capture.checkpoint import Entry, LoadPlan

__all__ = ["CheckpointContents"]


def _patterns(name: str, value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        return (value,)
    if isinstance(value, (list, tuple, set, frozenset)) and all(isinstance(v, str) for v in value):
        return tuple(value)
    raise ArgumentTypeError(
        f"{name}= takes glob patterns of parameter names (e.g. ['head.*']), got {type(value).__name__}"
    )


def _checkpoint(name: str, value: Any) -> Any:
    """*value* when it is a checkpoint file that exists or a dict of entries (read later, once)."""
    from graphaudit.capture.checkpoint import read_entries

    if isinstance(value, (str, os.PathLike)) and os.path.isfile(value):
        return value  # read when the evidence is made: only if a check needs it
    read_entries(value)  # what is wrong with it, in its words (a dict is read at once: it is in memory)
    return value


@dataclass(frozen=True)
class CheckpointContents(Evidence):
    """The checkpoint's entries (``name -> (shape, dtype)``) and the load planned from them."""

    title = "the checkpoint the network will load"
    requirement = Requirement("pass checkpoint='model.ckpt'", "give --checkpoint model.ckpt")
    needs = (NetworkGraph,)
    options = (
        Option(
            "checkpoint",
            "a checkpoint the network loads before training (a .ckpt file, or the dict "
            "mindspore.load_checkpoint returns), matched as load_param_into_net matches it (GA604-GA606)",
            flag="--checkpoint",
            metavar="FILE.ckpt",
            parse=_checkpoint,
        ),
        Option(
            "strict_load",
            "the strict_load the checkpoint is loaded with (default False, as in MindSpore)",
            flag="--strict-load",
            cli_value="flag",
            default=False,
        ),
        Option(
            "new_parameters",
            "glob patterns of the parameters the checkpoint is not meant to cover (a replaced head: head.*)",
            flag="--new-parameters",
            metavar="PATTERN",
            cli_value="paths",
            parse=_patterns,
        ),
    )

    source: str
    entries: dict[str, Entry]
    plan: LoadPlan
    new_patterns: tuple[str, ...] = ()
    strict_load: bool = False

    def declared_new(self, *names: str) -> bool:
        """Whether any of *names* (a parameter's name, its path) matches a ``new_parameters`` pattern."""
        return any(fnmatchcase(name, pattern) for name in names if name for pattern in self.new_patterns)

    def prefix_hint(self, unused: list[str]) -> tuple[str, str, list[str]] | None:
        """The renaming that maps *unused* entries onto parameters not loaded: ``(how, prefix, entries)``.

        See :func:`graphaudit.capture.checkpoint.suggest_prefix` (``how`` is ``"add"`` or ``"strip"``).
        """
        from graphaudit.capture.checkpoint import suggest_prefix

        return suggest_prefix(self.plan.not_loaded, unused)

    @classmethod
    def produce(cls, request: AuditRequest, have: EvidenceSet) -> CheckpointContents | Missing:
        checkpoint = request.option("checkpoint")
        patterns = request.option("new_parameters") or ()  # parsed at the door (Option)
        if checkpoint is None:
            return Missing()
        from graphaudit.capture.checkpoint import plan_load, read_entries

        strict = bool(request.option("strict_load"))
        try:
            entries = read_entries(checkpoint)
        except GraphAuditError as err:  # unreadable: about the option's value, said in the CLI's words too
            raise cls.options[0].worded(err) from err.__cause__
        source = os.fspath(checkpoint) if isinstance(checkpoint, (str, os.PathLike)) else "the parameter dict"
        return cls(source, entries, plan_load(request.net, entries, strict), patterns, strict)

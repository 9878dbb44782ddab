"""``audit(net, optimizer)``: the pipeline from the user's arguments to a :class:`~graphaudit.report.Report`.

:func:`audit` checks its arguments once (:mod:`~graphaudit.runner.request`), then
:func:`run_checks` runs every check whose evidence is there, producing each kind of evidence
at most once, on first need (:class:`~graphaudit.evidence.EvidenceSet`), records every
check that could not run with the reason, and merges what two checks found about one cause
(:mod:`~graphaudit.runner.merge`). Every entry point (``audit``, ``audit_dataset``,
``run_probe``, the training watch) reports through :func:`judged`: the same folds, deferrals
and configuration (``[tool.graphaudit]``), the same wrapping of unexpected errors (:func:`judging`).

Example:
    >>> import graphaudit
    >>> from mindspore import nn
    >>> net = nn.SequentialCell([nn.Dense(4, 4), nn.Dense(4, 2)])
    >>> optimizer = nn.SGD(net[0].trainable_params())  # net[1] left out by mistake
    >>> report = graphaudit.audit(net, optimizer)
    >>> [(f.check_id, f.subject, f.subjects) for f in report.findings if f.severity == "error"]
    [('GA201', '1', ('1.weight', '1.bias'))]
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from typing import Any

from graphaudit.checks import Check, all_checks
from graphaudit.checks.context import AuditContext
from graphaudit.errors import ArgumentTypeError, GraphAuditError, InternalError
from graphaudit.errors.arguments import checked_call
from graphaudit.evidence import REQUEST_KEYWORDS, EvidenceSet, all_options
from graphaudit.evidence.dataset import pipeline_graphs
from graphaudit.evidence.network import NetworkGraph
from graphaudit.findings import Finding
from graphaudit.report import NotRun, Report
from graphaudit.runner.config import Config, configured, find_config, load_config
from graphaudit.runner.merge import defer, merge_confirmations
from graphaudit.runner.request import REPORT_KEYWORDS, build_request

__all__ = ["audit", "configuration", "judged", "judging", "run_checks"]


@checked_call
def audit(
    net: Any,
    optimizer: Any = None,
    *,
    inputs: Any = None,
    label: Any = None,
    loss_fn: Any = None,
    spec: Any = None,
    mode: str | None = None,
    probe: bool | int = False,
    select: Any = None,
    ignore: Any = None,
    config: Any = None,
    **options: Any,
) -> Report:
    """Run every check on *net* and return a :class:`~graphaudit.report.Report`.

    *net* is a ``nn.Cell``, or a ``nn.WithLossCell``, ``nn.TrainOneStepCell`` or
    ``mindspore.train.Model``, in which case the backbone, loss and optimizer are found
    inside it (and ``inputs`` may end with the label: ``inputs=(x, y)``). With ``inputs`` (one
    batch, as ``construct`` takes it) one forward pass is traced, enabling the wiring and
    loss-pairing checks; ``label`` is the loss's target (``loss_fn(net(*inputs), label)``);
    *spec* declares the intended design (see :class:`~graphaudit.spec.Spec`). *mode*
    (``"train"`` or ``"eval"``) is what the network is about to be used for; it defaults to
    ``"train"`` when an optimizer is given. With ``probe=True`` (and ``inputs``, ``label``, a
    loss and an optimizer) one real training step is run and its numbers checked (GA9xx,
    see ``docs/probe.md``); ``probe=N`` runs N steps on the batch (the loss curve, update
    ratios, gradient ratios, loss-scale overflows). Other keywords feed further evidence:
    ``dataset=`` / ``eval_dataset=`` (the data pipelines, GA0xx), ``checkpoint=`` (GA604-GA606),
    ``graph_mode=True`` (GA712, GA713), ``peers=`` (GA801) and the rest shown in the signature;
    ``graphaudit checks`` lists what each check needs. The network, the optimizer and every
    global state are left exactly as they were.

    What is reported follows the configuration (:mod:`graphaudit.runner.config`): the
    ``[tool.graphaudit]`` table of the nearest ``pyproject.toml``, or *config* (a file path, a
    :class:`~graphaudit.runner.config.Config`, or ``False`` for none), with *select* (check
    IDs, prefixes such as ``"GA2"``, or names: only these are reported) and *ignore* (never
    these) on top. A finding it hides is in ``report.suppressed`` with the reason.

    Example:
        >>> import graphaudit
        >>> from mindspore import nn
        >>> block = nn.Dense(4, 4)
        >>> net = nn.SequentialCell([block] * 3)
        >>> report = graphaudit.audit(net, nn.SGD(net.trainable_params()))
        >>> [f.check_id for f in report.findings]
        ['GA101']
    """
    given = locals()  # the keywords are declared once (REQUEST_KEYWORDS): passed on by name
    from graphaudit.capture.network.structure import gc_frozen

    settings = configuration(config, "audit()").with_keywords(select=select, ignore=ignore)
    with (
        gc_frozen(),
        judging(
            "the audit", "The network was left as it was; if the error is not in your network's own code"
        ),
    ):
        # the collector would rescan the network's objects throughout the audit
        request = build_request(net, options=options, **{name: given[name] for name in REQUEST_KEYWORDS})
        return judged(EvidenceSet(request), settings)


@contextmanager
def judging(what: str, left: str) -> Iterator[None]:
    """Let graphaudit's own errors through; turn any other that escapes *what* into an :class:`InternalError`.

    *left* says what was left as it was (``"The network was left as it was; if the error is not
    in your network's own code"``), before ``, this is a bug in graphaudit``.
    """
    try:
        yield
    except GraphAuditError:
        raise
    except Exception as err:  # whatever escaped (a late kernel error...): still graphaudit's own error
        raise InternalError(
            f"{what} failed with {type(err).__name__}: {err}. {left}, this is a bug in graphaudit: please report it."
        ) from err


def judged(have: EvidenceSet, config: Config, checks: Iterable[Check] | None = None) -> Report:
    """The one policy of every entry point: run *checks* on *have*, fold, defer, and report as *config* says.

    ``audit``, ``audit_dataset``, ``run_probe`` and the training watch all come here: each
    check is run (:func:`run_checks`: folds and deferrals included), then the configuration
    (``[tool.graphaudit]``, ``select=``/``ignore=``) hides or re-grades findings
    (:func:`~graphaudit.runner.config.configured`).
    """
    return configured(run_checks(have, checks), config)


def configuration(config: Any, where: str) -> Config:
    """The configuration *config* names for *where* (``"audit()"``): ``None`` finds ``pyproject.toml``.

    A path to a ``pyproject.toml``, a :class:`~graphaudit.runner.config.Config`, ``False``
    (no configuration) or ``None`` (the ``[tool.graphaudit]`` table of the nearest one).
    """
    if config is None:
        return find_config()
    if config is False:
        return Config(source="no configuration")
    if isinstance(config, Config):
        return config
    if isinstance(config, (str, os.PathLike)):
        return load_config(config)
    raise ArgumentTypeError(
        f"{where} expects config= to be a path to a pyproject.toml, a graphaudit.runner.config.Config or "
        f"False, got {type(config).__name__}"
    )


def _with_options_in_signature() -> None:
    """Show the keywords that evidence kinds declare in ``help(audit)`` and ``inspect.signature``.

    ``audit()`` spells its fixed keywords out for editors; they must be the request's
    (:data:`~graphaudit.evidence.REQUEST_KEYWORDS`) and the report's (``REPORT_KEYWORDS``).
    """
    signature = inspect.signature(audit)
    fixed = [p for p in signature.parameters.values() if p.kind is not p.VAR_KEYWORD]
    spelt = [p.name for p in fixed[1:]]
    if sorted(spelt) != sorted([*REQUEST_KEYWORDS, *REPORT_KEYWORDS]):
        raise TypeError(
            f"audit()'s keywords {spelt} are not the request's {list(REQUEST_KEYWORDS)} and the report's "
            f"{list(REPORT_KEYWORDS)}: declare a new one as a field of AuditRequest (or in REPORT_KEYWORDS)"
        )
    declared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=None) for name in all_options()
    ]
    audit.__signature__ = signature.replace(parameters=[*fixed, *declared])  # type: ignore[attr-defined]


def _not_run(check: Check, have: EvidenceSet) -> NotRun | None:
    missing = [(kind, m) for kind in check.needs if (m := have.missing(kind)) is not None]
    if not missing:
        return None
    # Evidence that was asked for and could not be made says more than evidence not asked for.
    kind, reason = next(((k, m) for k, m in missing if m.reason), missing[0])
    return NotRun(
        check.check_id, check.name, kind.title, kind.requirement.python, kind.requirement.cli, reason.reason
    )


def run_checks(have: EvidenceSet, checks: Iterable[Check] | None = None) -> Report:
    """Run *checks* (default: every check) on the evidence *have*; see the module docstring."""
    from graphaudit.capture.network.structure import gc_paused

    selected = list(all_checks().values() if checks is None else checks)
    network = have.need(NetworkGraph)
    ctx = AuditContext(have)
    findings: list[Finding] = []
    run: list[str] = []
    not_run: list[NotRun] = []
    for check in selected:
        skipped = _not_run(check, have)
        if skipped is not None:
            not_run.append(skipped)
            continue
        try:
            with gc_paused():  # a check allocates no garbage; full collections would rescan the network
                findings.extend(check(ctx))
        except GraphAuditError:
            raise
        except Exception as err:
            raise InternalError(
                f"check {check.check_id} ({check.name}) failed with {type(err).__name__}: {err}. "
                "This is a bug in graphaudit; please report it. The network was left as it was."
            ) from err
        run.append(check.check_id)
    return Report(
        defer(merge_confirmations(findings, selected), selected),
        network.graph,
        checks_run=run,
        not_run=not_run,
        network=type(have.request.net).__name__,
        structure=network.structure,
        unwrapped=have.request.unwrapped,
        datasets=pipeline_graphs(have),
        reference=_reference(have, not_run),
    )


def _reference(have: EvidenceSet, not_run: list[NotRun]) -> dict[str, Any] | None:
    """The port's comparison with its original, from the evidence the checks made (none is made here)."""
    from graphaudit.evidence.reference import ReferenceWeights
    from graphaudit.evidence.reference_outputs import ReferenceOutputs

    made = {type(e): e for e in have.produced()}
    weights = made.get(ReferenceWeights)
    if not isinstance(weights, ReferenceWeights):
        return None
    from graphaudit.report.port import reference_section

    outputs = made.get(ReferenceOutputs)
    why = next((n.reason for n in not_run if n.check_id == "GA640" and n.reason), None)
    return reference_section(weights, outputs if isinstance(outputs, ReferenceOutputs) else None, why)


_with_options_in_signature()

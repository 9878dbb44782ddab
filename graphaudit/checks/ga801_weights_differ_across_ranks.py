"""GA801 weights-differ-across-ranks."""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from graphaudit.checks import register
from graphaudit.checks.context import AuditContext
from graphaudit.evidence.ranks import RankFingerprints
from graphaudit.findings import Finding, Severity
from graphaudit.fingerprint import Fingerprint, ParameterDigest

__all__ = ["CHECK_ID", "CHECK_NAME", "compare"]

CHECK_ID = "GA801"
CHECK_NAME = "weights-differ-across-ranks"


def _finding(severity: Severity, subject: str, message: str, fix: str) -> Finding:
    return Finding(CHECK_ID, CHECK_NAME, severity, subject, message, fix)


def _labels(fingerprints: Sequence[Fingerprint]) -> list[str]:
    plain = [fp.label for fp in fingerprints]
    labels = list(plain)
    for index, label in enumerate(plain):
        if plain.count(label) > 1:
            where = Path(fingerprints[index].source).name if fingerprints[index].source else f"#{index}"
            labels[index] = f"{label} ({where})"
    return labels


def _join(labels: Iterable[str]) -> str:
    items = list(labels)
    if all(label.startswith("rank ") and label[5:].isdigit() for label in items):
        numbers = ", ".join(label[5:] for label in items)
        return f"rank {numbers}" if len(items) == 1 else f"ranks {numbers}"
    return ", ".join(items)


def _describe(d: ParameterDigest) -> str:
    return f"{d.digest[:12]}, {'x'.join(map(str, d.shape)) or 'scalar'} {d.dtype}"


def compare(fingerprints: Sequence[Fingerprint]) -> list[Finding]:
    """GA801 findings for the parameters that are not identical on every fingerprint.

    One finding per parameter whose content (or shape or dtype) differs, naming which ranks
    agree with which (the largest group first); one per parameter missing on some ranks; and
    a warning, subject ``(world)``, when the fingerprints do not cover every rank of their
    world or disagree on its size. A difference in a parameter with ``requires_grad=False``
    (a frozen weight, a BatchNorm moving statistic) is a warning, any other an error.
    """
    fps = list(fingerprints)
    if len(fps) < 2:
        return []
    labels = _labels(fps)
    findings: list[Finding] = []
    names: list[str] = []
    for fp in fps:
        names.extend(n for n in fp.parameters if n not in names)
    seen = set()
    for name in names:
        if name in seen:
            continue
        seen.add(name)
        holders = [i for i, fp in enumerate(fps) if name in fp.parameters]
        if len(holders) < len(fps):
            missing = [labels[i] for i in range(len(fps)) if i not in holders]
            findings.append(
                _finding(
                    "error",
                    name,
                    f"{name} exists on {_join(labels[i] for i in holders)} but not on {_join(missing)}: "
                    "the ranks do not build the same network, so their gradients cannot be averaged "
                    "parameter by parameter.",
                    "Build the same network on every rank (no rank-dependent layers or options); "
                    "compare the parameter lists of the ranks.",
                )
            )
        groups: dict[ParameterDigest, list[int]] = {}
        for i in holders:
            d = fps[i].parameters[name]
            groups.setdefault(ParameterDigest(d.digest, d.shape, d.dtype), []).append(i)
        if len(groups) < 2:
            continue
        ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0]))
        parts = []
        for digest, members in ordered:
            verb = "agree on" if len(members) > 1 else "has"
            parts.append(f"{_join(labels[i] for i in members)} {verb} {_describe(digest)}")
        trainable = any(fps[i].parameters[name].requires_grad for i in holders)
        note = (
            ""
            if trainable
            else " It has requires_grad=False: BatchNorm moving statistics legitimately drift apart "
            "during training without SyncBatchNorm, but a frozen weight must be identical."
        )
        findings.append(
            _finding(
                "error" if trainable else "warning",
                name,
                f"{name} differs across ranks ({len(ordered)} versions): {'; '.join(parts)}. Data-parallel "
                f"training averages gradients, not weights, so the ranks train different models.{note}",
                "Initialise every rank identically: call mindspore.set_seed(SAME_SEED) (not a seed that "
                "depends on the rank) before building the network, or load the same checkpoint on every "
                "rank, or broadcast rank 0's weights before training.",
            )
        )
    findings.extend(_world_findings(fps, labels))
    return findings


def _world_findings(fps: Sequence[Fingerprint], labels: Sequence[str]) -> list[Finding]:
    sizes = sorted({fp.world_size for fp in fps if fp.world_size is not None})
    ranks = {fp.rank for fp in fps if fp.rank is not None}
    problems = []
    if len(sizes) > 1:
        problems.append(f"the fingerprints disagree on the world size ({', '.join(map(str, sizes))})")
    elif sizes and len(ranks) == len(fps) and ranks != set(range(sizes[0])):
        absent = sorted(set(range(sizes[0])) - ranks)
        if absent:
            problems.append(
                f"they cover {_join(labels)} of a world of {sizes[0]}; {_join(f'rank {r}' for r in absent)} "
                "not compared"
            )
    if len(ranks) < len([fp for fp in fps if fp.rank is not None]):
        problems.append("several fingerprints claim the same rank")
    if not problems:
        return []
    return [
        _finding(
            "warning",
            "(world)",
            f"The fingerprints compared are not one complete world: {'; '.join(problems)}.",
            "Compare one fingerprint file per rank, all from the same job.",
        )
    ]


@register(
    "GA801",
    "weights-differ-across-ranks",
    severity="error",
    also=("warning",),
    needs=(RankFingerprints,),
)
def check(ctx: AuditContext) -> Iterator[Finding]:
    """A parameter whose initial value is not the same on every rank of a data-parallel job.

    What it does:
        When ``mindspore.communication`` is initialised (``init()`` was called, e.g. under
        ``msrun``) and the world has more than one rank, hashes every parameter of the network
        (blake2b of dtype, shape and bytes), exchanges the hashes with ``ops.AllGather`` and
        reports each parameter that differs across ranks (saying which ranks agree with which)
        or exists on some ranks only. It is an error, a warning for a parameter with
        ``requires_grad=False``. Without initialised communication it compares with the
        fingerprints of the other ranks given as files, ``audit(net, peers=["rank1.json"])``;
        the offline path is to save ``graphaudit.fingerprint.fingerprint(net)`` on each rank
        and run ``graphaudit compare rank*.json``. The check is a collective: call ``audit`` on every
        rank, or the others wait for it.

    Why is this bad:
        Data-parallel training averages the *gradients* of the ranks and applies the same
        update everywhere: the copies stay equal only if they start equal. A rank that drew
        its own random weights (a seed that depends on the rank, a checkpoint loaded on rank 0
        only) trains another model; the averaged gradient fits none of them, accuracy
        degrades, and which rank's weights get saved decides the result. Nothing raises.

    Example:
        ```python
        init()
        ms.set_seed(42 + get_rank())  # a different initialisation on every rank
        net = Net()
        ```

    Use instead:
        ```python
        init()
        ms.set_seed(42)  # the same initial weights everywhere; shuffle the data per rank instead
        net = Net()
        ```
    """
    nodes = {param.name: node for node, param in ctx.parameters()}
    for finding in compare(ctx.need(RankFingerprints).fingerprints):
        node = nodes.get(finding.subject)
        yield ctx.finding(
            finding.severity, finding.subject, finding.message, finding.fix, (node,) if node else ()
        )

"""How the weight fingerprints of the ranks of one job differ: by parameter, and as a world.

:func:`differences` compares fingerprints (:mod:`graphaudit.distributed.fingerprint`) without
MindSpore; check GA801 reports each :class:`Difference` as a finding, and
``graphaudit compare`` (:mod:`graphaudit.report.compare`) shows them.

Example:
    >>> from graphaudit.distributed.fingerprint import Fingerprint, ParameterDigest
    >>> def rank(r, digest):
    ...     return Fingerprint({"w": ParameterDigest(digest, (2,), "Float32")}, rank=r, world_size=2)
    >>> [(d.severity, d.subject) for d in differences([rank(0, "aa"), rank(1, "bb")])]
    [('error', 'w')]
    >>> differences([rank(0, "aa"), rank(1, "aa")])
    []
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphaudit.distributed.fingerprint import Fingerprint, ParameterDigest
from graphaudit.findings import Severity

__all__ = ["WORLD", "Difference", "differences"]

#: The subject of a difference about the set of fingerprints itself (ranks missing, sizes disagreeing).
WORLD = "(world)"


@dataclass(frozen=True)
class Difference:
    """One way the fingerprints of the ranks disagree: about a parameter, or ``(world)`` itself."""

    severity: Severity
    subject: str
    message: str
    fix: str


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


def differences(fingerprints: Sequence[Fingerprint]) -> list[Difference]:
    """The parameters that are not identical on every fingerprint (check GA801's evidence).

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
    findings: list[Difference] = []
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
                Difference(
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
            " Data-parallel training averages gradients, not weights, so the ranks train different models."
            if trainable
            else " It has requires_grad=False: BatchNorm moving statistics legitimately drift apart "
            "during training without SyncBatchNorm, but a frozen weight must be identical, or the "
            "ranks compute different functions."
        )
        findings.append(
            Difference(
                "error" if trainable else "warning",
                name,
                f"{name} differs across ranks ({len(ordered)} versions): {'; '.join(parts)}.{note}",
                "Initialise every rank identically: call mindspore.set_seed(SAME_SEED) (not a seed that "
                "depends on the rank) before building the network, or load the same checkpoint on every "
                "rank, or broadcast rank 0's weights before training.",
            )
        )
    findings.extend(_world_findings(fps, labels))
    return findings


def _world_findings(fps: Sequence[Fingerprint], labels: Sequence[str]) -> list[Difference]:
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
        Difference(
            "warning",
            WORLD,
            f"The fingerprints compared are not one complete world: {'; '.join(problems)}.",
            "Compare one fingerprint file per rank, all from the same job.",
        )
    ]

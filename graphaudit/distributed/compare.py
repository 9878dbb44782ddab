"""How the weight fingerprints of the ranks of one job differ: by parameter, and as a world.

:func:`differences` compares fingerprints (:mod:`graphaudit.distributed.fingerprint`) without
MindSpore and returns each way they disagree as a typed record, a :class:`Difference` (the
cause of a GA801 finding): a parameter whose versions differ (:class:`ParameterDiffersAcrossRanks`),
one missing on some ranks (:class:`ParameterMissingOnRanks`), or fingerprints that are not one
complete world (:class:`IncompleteWorld`). Check GA801 reports each as a finding, and
``graphaudit compare`` (:mod:`graphaudit.report.compare`) shows them.

Example:
    >>> from graphaudit.distributed.fingerprint import Fingerprint, ParameterDigest
    >>> def rank(r, digest):
    ...     return Fingerprint({"w": ParameterDigest(digest, (2,), "Float32")}, rank=r, world_size=2)
    >>> [(d.severity, d.subject, type(d).__name__) for d in differences([rank(0, "aa"), rank(1, "bb")])]
    [('error', 'w', 'ParameterDiffersAcrossRanks')]
    >>> differences([rank(0, "aa"), rank(1, "aa")])
    []
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from graphaudit.distributed.fingerprint import Fingerprint, ParameterDigest
from graphaudit.findings import Cause, Facts, Severity

__all__ = [
    "WORLD",
    "Difference",
    "IncompleteWorld",
    "ParameterDiffersAcrossRanks",
    "ParameterMissingOnRanks",
    "ParameterVersion",
    "differences",
]

#: The subject of a difference about the set of fingerprints itself (ranks missing, sizes disagreeing).
WORLD = "(world)"

_SAME_INITIALISATION = (
    "Initialise every rank identically: call mindspore.set_seed(SAME_SEED) (not a seed that "
    "depends on the rank) before building the network, or load the same checkpoint on every "
    "rank, or broadcast rank 0's weights before training."
)


def _join(labels: Iterable[str]) -> str:
    """``rank 0``, ``ranks 0, 2``, or the labels themselves when they are not all ``rank N``."""
    items = list(labels)
    if all(label.startswith("rank ") and label[5:].isdigit() for label in items):
        numbers = ", ".join(label[5:] for label in items)
        return f"rank {numbers}" if len(items) == 1 else f"ranks {numbers}"
    return ", ".join(items)


@dataclass(frozen=True)
class Difference(Cause):
    """One way the fingerprints of the ranks disagree: about a parameter, or ``(world)`` itself."""

    @property
    def severity(self) -> Severity:
        return "error"

    @property
    def subject(self) -> str:
        return WORLD


@dataclass(frozen=True)
class ParameterVersion(Facts):
    """One version of a parameter across the ranks (a part of :class:`ParameterDiffersAcrossRanks`)."""

    ranks: tuple[str, ...]  # the labels of the ranks that hold it ("rank 0")
    digest: str  # its content hash
    shape: tuple[int, ...]
    dtype: str

    def message(self) -> str:
        verb = "agree on" if len(self.ranks) > 1 else "has"
        shape = "x".join(map(str, self.shape)) or "scalar"
        return f"{_join(self.ranks)} {verb} {self.digest[:12]}, {shape} {self.dtype}"


@dataclass(frozen=True)
class ParameterDiffersAcrossRanks(Difference):
    """A parameter whose content (or shape or dtype) is not the same on every rank that holds it."""

    name: str
    versions: tuple[ParameterVersion, ...]  # the largest group of ranks first
    trainable: bool  # requires_grad=True on some rank: an error; else a warning (BatchNorm statistics drift)
    what: str  # "content" (one shape and dtype) or "layout" (the shapes or dtypes differ)

    @property
    def severity(self) -> Severity:
        return "error" if self.trainable else "warning"

    @property
    def subject(self) -> str:
        return self.name

    def message(self) -> str:
        note = (
            " Data-parallel training averages gradients, not weights, so the ranks train different models."
            if self.trainable
            else " It has requires_grad=False: BatchNorm moving statistics legitimately drift apart "
            "during training without SyncBatchNorm, but a frozen weight must be identical, or the "
            "ranks compute different functions."
        )
        parts = "; ".join(version.message() for version in self.versions)
        return f"{self.name} differs across ranks ({len(self.versions)} versions): {parts}.{note}"

    def fix(self) -> str:
        return _SAME_INITIALISATION


@dataclass(frozen=True)
class ParameterMissingOnRanks(Difference):
    """A parameter that some ranks hold and others do not: the ranks build different networks."""

    name: str
    present: tuple[str, ...]  # the labels of the ranks that hold it
    absent: tuple[str, ...]  # those that do not

    @property
    def subject(self) -> str:
        return self.name

    def message(self) -> str:
        return (
            f"{self.name} exists on {_join(self.present)} but not on {_join(self.absent)}: "
            "the ranks do not build the same network, so their gradients cannot be averaged "
            "parameter by parameter."
        )

    def fix(self) -> str:
        return (
            "Build the same network on every rank (no rank-dependent layers or options); "
            "compare the parameter lists of the ranks."
        )


@dataclass(frozen=True)
class IncompleteWorld(Difference):
    """The fingerprints compared are not one complete world: sizes disagree, ranks are missing or repeated."""

    sizes: tuple[int, ...]  # the world sizes they claim, when they disagree (else empty)
    compared: tuple[str, ...]  # the labels of the ranks compared, when some of the world is missing
    world_size: int | None  # the world size they agree on, when some of it is missing
    absent: tuple[int, ...]  # the ranks of that world not compared
    same_rank: bool  # several fingerprints claim the same rank

    @property
    def severity(self) -> Severity:
        return "warning"

    def message(self) -> str:
        problems = []
        if len(self.sizes) > 1:
            problems.append(
                f"the fingerprints disagree on the world size ({', '.join(map(str, self.sizes))})"
            )
        elif self.absent:
            problems.append(
                f"they cover {_join(self.compared)} of a world of {self.world_size}; "
                f"{_join(f'rank {r}' for r in self.absent)} not compared"
            )
        if self.same_rank:
            problems.append("several fingerprints claim the same rank")
        return f"The fingerprints compared are not one complete world: {'; '.join(problems)}."

    def fix(self) -> str:
        return "Compare one fingerprint file per rank, all from the same job."


def _labels(fingerprints: Sequence[Fingerprint]) -> list[str]:
    plain = [fp.label for fp in fingerprints]
    labels = list(plain)
    for index, label in enumerate(plain):
        if plain.count(label) > 1:
            where = Path(fingerprints[index].source).name if fingerprints[index].source else f"#{index}"
            labels[index] = f"{label} ({where})"
    return labels


def differences(fingerprints: Sequence[Fingerprint]) -> list[Difference]:
    """The parameters that are not identical on every fingerprint (check GA801's evidence).

    One record per parameter whose content (or shape or dtype) differs, naming which ranks
    agree with which (the largest group first); one per parameter missing on some ranks; and
    one about ``(world)`` when the fingerprints do not cover every rank of their world or
    disagree on its size (a warning). A difference in a parameter with ``requires_grad=False``
    (a frozen weight, a BatchNorm moving statistic) is a warning, any other an error.
    """
    fps = list(fingerprints)
    if len(fps) < 2:
        return []
    labels = _labels(fps)
    found: list[Difference] = []
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
            absent = tuple(labels[i] for i in range(len(fps)) if i not in holders)
            found.append(ParameterMissingOnRanks(name, tuple(labels[i] for i in holders), absent))
        groups: dict[ParameterDigest, list[int]] = {}
        for i in holders:
            d = fps[i].parameters[name]
            groups.setdefault(ParameterDigest(d.digest, d.shape, d.dtype), []).append(i)
        if len(groups) < 2:
            continue
        ordered = sorted(groups.items(), key=lambda item: (-len(item[1]), item[1][0]))
        versions = tuple(
            ParameterVersion(
                tuple(labels[i] for i in members), d.digest, tuple(int(n) for n in d.shape), str(d.dtype)
            )
            for d, members in ordered
        )
        layouts = {(tuple(d.shape), d.dtype) for d in groups}
        trainable = any(fps[i].parameters[name].requires_grad for i in holders)
        found.append(
            ParameterDiffersAcrossRanks(
                name, versions, bool(trainable), "content" if len(layouts) == 1 else "layout"
            )
        )
    found.extend(_world_differences(fps, labels))
    return found


def _world_differences(fps: Sequence[Fingerprint], labels: Sequence[str]) -> list[Difference]:
    sizes = sorted({fp.world_size for fp in fps if fp.world_size is not None})
    ranks = {fp.rank for fp in fps if fp.rank is not None}
    disagree: tuple[int, ...] = tuple(int(s) for s in sizes) if len(sizes) > 1 else ()
    absent: tuple[int, ...] = ()
    if not disagree and sizes and len(ranks) == len(fps) and ranks != set(range(sizes[0])):
        absent = tuple(sorted(set(range(sizes[0])) - ranks))
    same_rank = len(ranks) < len([fp for fp in fps if fp.rank is not None])
    if not (disagree or absent or same_rank):
        return []
    world = int(sizes[0]) if absent else None
    return [IncompleteWorld(disagree, tuple(labels) if absent else (), world, absent, same_rank)]

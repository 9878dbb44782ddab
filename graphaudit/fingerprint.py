"""Weight fingerprints: are the ranks of a data-parallel job starting from the same weights?

In data-parallel training every rank holds a full copy of the network and the gradients are
averaged across ranks; the copies only stay equal if they *start* equal. A rank that drew its
own random initialisation (a seed that depends on the rank, a checkpoint loaded on rank 0
only) trains a different model, and nothing raises.

:func:`fingerprint` hashes every parameter of a network (name → blake2b of dtype, shape and
raw bytes), :meth:`Fingerprint.save` / :meth:`Fingerprint.load` keep it as JSON, and
:func:`compare` lists the parameters that differ across ranks (check GA801). Inside
:func:`graphaudit.audit` GA801 exchanges the fingerprints with MindSpore's own
``AllGather`` when ``mindspore.communication`` is initialised, or compares with the files
given as ``audit(net, peers=["rank1.json", ...])``; the offline path is
``graphaudit compare rank*.json`` (see ``docs/distributed.md``).

This module is the file format; the hashing and the collectives run MindSpore and live in
:mod:`graphaudit.capture.fingerprint`.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> def dense(seed):
    ...     init = Tensor(np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32))
    ...     return nn.Dense(4, 2, weight_init=init, bias_init="zeros")
    >>> rank0, rank1 = fingerprint(dense(0), rank=0), fingerprint(dense(1), rank=1)
    >>> sorted(rank0.parameters)
    ['bias', 'weight']
    >>> [(f.check_id, f.subject) for f in compare([rank0, rank1])]
    [('GA801', 'weight')]
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Union

from graphaudit.errors import ArgumentError, ArgumentTypeError, FingerprintError, check_count

if TYPE_CHECKING:
    from graphaudit.findings import Finding

__all__ = [
    "ALGORITHM",
    "FORMAT",
    "FORMAT_VERSION",
    "Fingerprint",
    "FingerprintError",
    "ParameterDigest",
    "compare",
    "fingerprint",
]

FORMAT = "graphaudit-fingerprint"
FORMAT_VERSION = 1
ALGORITHM = "blake2b-128"  #: blake2b, 16-byte digest, of dtype + shape + raw little-endian bytes

PathLike = Union[str, "os.PathLike[str]"]


@dataclass(frozen=True)
class ParameterDigest:
    """The content hash of one parameter, with its shape, dtype and ``requires_grad``."""

    digest: str
    shape: tuple[int, ...]
    dtype: str
    requires_grad: bool = True

    def to_dict(self) -> dict[str, Any]:
        return {
            "digest": self.digest,
            "shape": list(self.shape),
            "dtype": self.dtype,
            "requires_grad": self.requires_grad,
        }


@dataclass
class Fingerprint:
    """Every parameter's :class:`ParameterDigest` by name, and where it was taken.

    ``rank`` and ``world_size`` say which rank of which job it is (``None`` when unknown);
    ``source`` is the file it was loaded from (not saved).
    """

    parameters: dict[str, ParameterDigest]
    rank: int | None = None
    world_size: int | None = None
    hostname: str = ""
    network: str = ""
    version: str = ""
    source: str | None = field(default=None, compare=False)

    @property
    def label(self) -> str:
        """``rank 3``, or the file name (or ``?``) when the rank is unknown."""
        if self.rank is not None:
            return f"rank {self.rank}"
        return Path(self.source).name if self.source else "rank ?"

    def to_dict(self) -> dict[str, Any]:
        return {
            "format": FORMAT,
            "format_version": FORMAT_VERSION,
            "algorithm": ALGORITHM,
            "graphaudit_version": self.version,
            "rank": self.rank,
            "world_size": self.world_size,
            "hostname": self.hostname,
            "network": self.network,
            "parameters": {name: d.to_dict() for name, d in self.parameters.items()},
        }

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), indent=1)

    def save(self, path: PathLike) -> None:
        """Write the fingerprint as JSON to *path* (folders are created)."""
        target = Path(path)
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(self.to_json() + "\n", encoding="utf-8")

    @classmethod
    def from_dict(cls, data: Any, source: str | None = None) -> Fingerprint:
        where = source or "the fingerprint"
        if not isinstance(data, dict) or data.get("format") != FORMAT:
            raise FingerprintError(
                f'{where} is not a graphaudit fingerprint (no "format": "{FORMAT}"); write one with '
                "graphaudit.fingerprint.fingerprint(net).save(path)"
            )
        if data.get("format_version") != FORMAT_VERSION or data.get("algorithm", ALGORITHM) != ALGORITHM:
            raise FingerprintError(
                f"{where} has format_version {data.get('format_version')!r} / algorithm "
                f"{data.get('algorithm')!r}; this graphaudit reads version {FORMAT_VERSION}, {ALGORITHM}: "
                "write every rank's fingerprint with the same graphaudit version"
            )
        raw = data.get("parameters")
        if not isinstance(raw, dict):
            raise FingerprintError(f'{where} has no "parameters" object')
        parameters = {}
        for name, entry in raw.items():
            try:
                parameters[name] = ParameterDigest(
                    str(entry["digest"]),
                    tuple(int(d) for d in entry["shape"]),
                    str(entry["dtype"]),
                    bool(entry.get("requires_grad", True)),
                )
            except (KeyError, TypeError, ValueError) as err:
                raise FingerprintError(f"{where}: parameter {name!r} is malformed ({err!r})") from err
        rank, world = data.get("rank"), data.get("world_size")
        for key, value in (("rank", rank), ("world_size", world)):
            if value is not None and (not isinstance(value, int) or isinstance(value, bool) or value < 0):
                raise FingerprintError(
                    f"{where}: {key} must be a non-negative integer or null, got {value!r}"
                )
        return cls(
            parameters,
            rank,
            world,
            str(data.get("hostname", "")),
            str(data.get("network", "")),
            str(data.get("graphaudit_version", "")),
            source,
        )

    @classmethod
    def load(cls, path: PathLike) -> Fingerprint:
        """Read a fingerprint written by :meth:`save`; :class:`FingerprintError` when unreadable."""
        try:
            text = Path(path).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as err:
            raise FingerprintError(f"cannot read the fingerprint file {path}: {err}") from err
        try:
            data = json.loads(text)
        except json.JSONDecodeError as err:
            raise FingerprintError(
                f"{path} is not JSON ({err}); is it a graphaudit fingerprint file?"
            ) from err
        return cls.from_dict(data, str(path))


def fingerprint(net: Any, *, rank: int | None = None, world_size: int | None = None) -> Fingerprint:
    """The :class:`Fingerprint` of every parameter of *net* (a ``nn.Cell``), by parameter name.

    ``rank`` and ``world_size`` default to the communication world when it is initialised,
    else to the ``RANK_ID`` / ``RANK_SIZE`` environment variables (set by ``msrun``), else
    ``0`` and ``1``. Parameters are read, never changed. Shared parameters count once.
    """
    from graphaudit.capture.fingerprint import fingerprint_network

    check_count(rank, "rank", "fingerprint()", minimum=0, allow_none=True)
    check_count(world_size, "world_size", "fingerprint()", minimum=1, allow_none=True)
    if rank is not None and world_size is not None and rank >= world_size:
        raise ArgumentError(
            f"fingerprint() got rank={rank} with world_size={world_size}: ranks count from 0, so "
            f"rank must be below world_size (0 to {world_size - 1})"
        )
    return fingerprint_network(net, rank=rank, world_size=world_size)


def compare(fingerprints: Sequence[Fingerprint]) -> list[Finding]:
    """GA801 findings for the parameters that are not identical on every fingerprint.

    See :func:`graphaudit.checks.ga801_weights_differ_across_ranks.compare`.
    """
    from graphaudit.checks.ga801_weights_differ_across_ranks import compare as ga801_compare

    if isinstance(fingerprints, (str, bytes, Fingerprint)) or not hasattr(fingerprints, "__iter__"):
        raise ArgumentTypeError(
            f"compare() expects a list of Fingerprint objects (one per rank), got {type(fingerprints).__name__}: "
            "write compare([Fingerprint.load(path) for path in paths])"
        )
    fingerprints = list(fingerprints)
    wrong = [f for f in fingerprints if not isinstance(f, Fingerprint)]
    if wrong:
        raise ArgumentTypeError(
            f"compare() expects Fingerprint objects (from fingerprint(net) or Fingerprint.load(path)), "
            f"got a {type(wrong[0]).__name__} in the list"
        )
    if not fingerprints:
        raise ArgumentError(
            "compare() got no fingerprint: save one per rank (fingerprint(net).save(path)) and compare them all"
        )
    return ga801_compare(fingerprints)

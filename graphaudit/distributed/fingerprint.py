"""Weight fingerprints: are the ranks of a data-parallel job starting from the same weights?

In data-parallel training every rank holds a full copy of the network and the gradients are
averaged across ranks; the copies only stay equal if they *start* equal. A rank that drew its
own random initialisation (a seed that depends on the rank, a checkpoint loaded on rank 0
only) trains a different model, and nothing raises.

:func:`graphaudit.fingerprint.fingerprint` hashes every parameter of a network (name → blake2b of dtype, shape and
raw bytes), :meth:`Fingerprint.save` / :meth:`Fingerprint.load` keep it as JSON, and
:func:`graphaudit.fingerprint.compare` lists the parameters that differ across ranks (check GA801). Inside
:func:`graphaudit.audit` GA801 exchanges the fingerprints with MindSpore's own
``AllGather`` when ``mindspore.communication`` is initialised, or compares with the files
given as ``audit(net, peers=["rank1.json", ...])``; the offline path is
``graphaudit compare rank*.json`` (see ``docs/distributed.md``).

This module is the file format (no MindSpore); the hashing and the collectives run MindSpore
and live in :mod:`graphaudit.distributed.hashing`; the comparison is check GA801's.

Example:
    >>> import numpy as np
    >>> from mindspore import Tensor, nn
    >>> def dense(seed):
    ...     init = Tensor(np.random.default_rng(seed).normal(size=(2, 4)).astype(np.float32))
    ...     return nn.Dense(4, 2, weight_init=init, bias_init="zeros")
    >>> from graphaudit.distributed.hashing import fingerprint_network
    >>> rank0 = fingerprint_network(dense(0), rank=0)
    >>> sorted(rank0.parameters)
    ['bias', 'weight']
    >>> Fingerprint.from_dict(rank0.to_dict()) == rank0
    True
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from graphaudit.errors import FingerprintError

__all__ = [
    "ALGORITHM",
    "FORMAT",
    "FORMAT_VERSION",
    "DataFacts",
    "Fingerprint",
    "FingerprintError",
    "ParameterDigest",
    "RankSetup",
    "SourceShard",
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


@dataclass(frozen=True)
class SourceShard:
    """How one source of a rank's data pipeline is sharded: its part of the data set."""

    source: str  #: the source's class, ``ImageFolderDataset``
    num_shards: int  #: ``num_shards=`` (1: not sharded)
    shard_id: int
    sampler: str  #: the sampler's class, ``""`` when none was given
    shuffle: str  #: how it shuffles (``"global"``, ``"files"``...; ``""``: not at all)


@dataclass(frozen=True)
class DataFacts:
    """What one rank's training pipeline feeds it: the facts the ranks compare (GA802-GA804).

    ``first_batch`` is a digest of the first batch sampled from a copy of the pipeline
    (``None`` when sampling was off); ``preprocessing`` a digest of the pipeline's operations
    and their parameters, its sources left out (ranks may read different files); ``batches``
    the batches per epoch MindSpore reports (``None`` when it cannot say cheaply); ``seed``
    the dataset seed (``mindspore.dataset.config.get_seed()``).
    """

    sources: tuple[SourceShard, ...]
    batches: int | None
    batch_size: int | None
    first_batch: str | None
    preprocessing: str
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        return {
            "sources": [vars(source) for source in self.sources],
            "batches": self.batches,
            "batch_size": self.batch_size,
            "first_batch": self.first_batch,
            "preprocessing": self.preprocessing,
            "seed": self.seed,
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DataFacts:
        return cls(
            tuple(SourceShard(**source) for source in data["sources"]),
            data["batches"],
            data["batch_size"],
            data["first_batch"],
            str(data["preprocessing"]),
            data["seed"],
        )


@dataclass(frozen=True)
class RankSetup:
    """How one rank trains, beside its weights: the parallel context and its data.

    ``parallel_mode`` and ``gradients_mean`` are MindSpore's auto-parallel context
    (``mindspore.get_auto_parallel_context``); ``reducer`` how the audited train cell
    reduces gradients when it holds a ``DistributedGradReducer`` (``"mean"``, ``"sum"``;
    ``None`` when the audit cannot see one); ``data`` the training pipeline's facts
    (``None`` without ``dataset=``).
    """

    parallel_mode: str
    gradients_mean: bool | None
    reducer: str | None = None
    data: DataFacts | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "parallel_mode": self.parallel_mode,
            "gradients_mean": self.gradients_mean,
            "reducer": self.reducer,
            "data": None if self.data is None else self.data.to_dict(),
        }

    @classmethod
    def from_dict(cls, data: Any, where: str) -> RankSetup:
        try:
            facts = data.get("data")
            return cls(
                str(data["parallel_mode"]),
                data["gradients_mean"],
                data.get("reducer"),
                None if facts is None else DataFacts.from_dict(facts),
            )
        except (AttributeError, KeyError, TypeError, ValueError) as err:
            raise FingerprintError(f'{where}: its "setup" is malformed ({err!r})') from err


@dataclass
class Fingerprint:
    """Every parameter's :class:`ParameterDigest` by name, and where it was taken.

    ``rank`` and ``world_size`` say which rank of which job it is (``None`` when unknown);
    ``setup`` how the rank trains (its parallel context and data; ``None`` when not taken);
    ``source`` is the file it was loaded from (not saved).
    """

    parameters: dict[str, ParameterDigest]
    rank: int | None = None
    world_size: int | None = None
    hostname: str = ""
    network: str = ""
    version: str = ""
    source: str | None = field(default=None, compare=False)
    setup: RankSetup | None = None

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
            **({} if self.setup is None else {"setup": self.setup.to_dict()}),
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
            None if data.get("setup") is None else RankSetup.from_dict(data["setup"], where),
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

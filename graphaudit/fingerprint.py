"""Weight fingerprints: are the ranks of a data-parallel job starting from the same weights?

In data-parallel training every rank holds a full copy of the network and the gradients are
averaged across ranks; the copies only stay equal if they *start* equal. A rank that drew its
own random initialisation (a seed that depends on the rank, a checkpoint loaded on rank 0
only) trains a different model, and nothing raises.

:func:`fingerprint` hashes every parameter of a network (name → blake2b of dtype, shape and
raw bytes), :meth:`Fingerprint.save` / :meth:`Fingerprint.load` keep it as JSON, and
:func:`compare` lists the parameters that differ across ranks. Check GA801 does the same
inside :func:`graphaudit.audit` with MindSpore's own ``AllGather`` when
``mindspore.communication`` is initialised (:func:`gather_fingerprints`); the offline path is
``graphaudit compare rank*.json``. :func:`use_peer_fingerprints` makes GA801 compare a network
with fingerprints written by other processes, without any communication (see
``docs/distributed.md``).

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

import hashlib
import json
import os
import socket
import weakref
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

import numpy as np

from graphaudit.errors import GraphAuditError
from graphaudit.findings import Finding

__all__ = [
    "CHECK_ID",
    "CHECK_NAME",
    "Fingerprint",
    "FingerprintError",
    "ParameterDigest",
    "clear_peer_fingerprints",
    "communication_world",
    "compare",
    "fingerprint",
    "gather_fingerprints",
    "peer_fingerprints",
    "use_peer_fingerprints",
]

CHECK_ID = "GA801"
CHECK_NAME = "weights-differ-across-ranks"
FORMAT = "graphaudit-fingerprint"
FORMAT_VERSION = 1
ALGORITHM = "blake2b-128"  #: blake2b, 16-byte digest, of dtype + shape + raw little-endian bytes
EXTRA_KEY = "GA801.peers"  #: an AuditContext.extra key GA801 reads: a list of peer Fingerprints

PathLike = Union[str, "os.PathLike[str]"]


class FingerprintError(GraphAuditError, ValueError):
    """A fingerprint file is unreadable or not a graphaudit fingerprint."""


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


# --------------------------------------------------------------------------- hashing


def _array(param: Any) -> np.ndarray:
    try:
        array = param.asnumpy()
    except (TypeError, RuntimeError):  # e.g. bfloat16, which numpy has no dtype for
        import mindspore as ms

        array = param.astype(ms.float32).asnumpy()
    array = np.ascontiguousarray(array)
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    return array


def digest_parameter(param: Any) -> ParameterDigest:
    """The :class:`ParameterDigest` of one ``Parameter`` (or ``Tensor``)."""
    array = _array(param)
    dtype = str(param.dtype)
    shape = tuple(int(d) for d in param.shape)
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(f"{dtype}|{shape}|".encode())
    hasher.update(memoryview(array).cast("B") if array.size else b"")
    return ParameterDigest(hasher.hexdigest(), shape, dtype, bool(getattr(param, "requires_grad", True)))


def communication_world() -> tuple[int, int] | None:
    """``(rank, group size)`` when ``mindspore.communication`` is initialised, else ``None``.

    Never initialises communication itself.
    """
    try:
        from mindspore.communication.management import GlobalComm, get_group_size, get_rank
    except ImportError:
        return None
    if not getattr(GlobalComm, "INITED", False):
        return None
    try:
        return int(get_rank()), int(get_group_size())
    except Exception:  # any failure means: no usable world
        return None


def _env_int(*names: str) -> int | None:
    for name in names:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def fingerprint(net: Any, *, rank: int | None = None, world_size: int | None = None) -> Fingerprint:
    """The :class:`Fingerprint` of every parameter of *net* (a ``nn.Cell``), by parameter name.

    ``rank`` and ``world_size`` default to the communication world when it is initialised,
    else to the ``RANK_ID`` / ``RANK_SIZE`` environment variables (set by ``msrun``), else
    ``0`` and ``1``. Parameters are read, never changed. Shared parameters count once.
    """
    from mindspore import nn

    from graphaudit import __version__

    if not isinstance(net, nn.Cell):
        raise GraphAuditError(
            f"fingerprint() expects a mindspore.nn.Cell, got {type(net).__name__}: pass the network"
        )
    world = communication_world()
    if rank is None:
        rank = world[0] if world else _env_int("RANK_ID", "MS_NODE_ID")
        rank = 0 if rank is None else rank
    if world_size is None:
        world_size = world[1] if world else _env_int("RANK_SIZE", "MS_WORKER_NUM")
        world_size = 1 if world_size is None else world_size
    parameters = {name: digest_parameter(param) for name, param in net.parameters_dict().items()}
    return Fingerprint(parameters, rank, world_size, socket.gethostname(), type(net).__name__, __version__)


# --------------------------------------------------------------------------- comparing


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
                Finding(
                    CHECK_ID,
                    CHECK_NAME,
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
            Finding(
                CHECK_ID,
                CHECK_NAME,
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
        Finding(
            CHECK_ID,
            CHECK_NAME,
            "warning",
            "(world)",
            f"The fingerprints compared are not one complete world: {'; '.join(problems)}.",
            "Compare one fingerprint file per rank, all from the same job.",
        )
    ]


# --------------------------------------------------------------------------- collectives


def _all_gather_int32(values: np.ndarray) -> np.ndarray:
    from mindspore import Tensor, ops

    return ops.AllGather()(Tensor(np.ascontiguousarray(values, dtype=np.int32))).asnumpy()


def gather_fingerprints(local: Fingerprint, world_size: int) -> list[Fingerprint]:
    """Every rank's fingerprint, in rank order, exchanged with ``ops.AllGather``.

    A collective: every rank of the world must call it (``graphaudit.audit`` does, in GA801),
    or the others wait. Two int32 all-gathers: the payload lengths, then each rank's compact
    JSON fingerprint (16 bytes of digest per parameter, plus name, shape and dtype) padded to
    the longest. (The CPU ``AllGather`` kernel takes no 8-bit integers, hence int32 words.)
    """
    payload = json.dumps(local.to_dict(), separators=(",", ":")).encode("utf-8")
    lengths = _all_gather_int32(np.array([len(payload)], np.int32)).reshape(-1)
    if lengths.size != world_size:
        raise GraphAuditError(f"AllGather returned {lengths.size} lengths for a world of {world_size}")
    words = (int(lengths.max()) + 3) // 4
    buffer = np.zeros(words * 4, np.uint8)
    buffer[: len(payload)] = np.frombuffer(payload, np.uint8)
    gathered = _all_gather_int32(buffer.view("<i4").astype(np.int32)).reshape(world_size, words)
    result = []
    for index, row in enumerate(gathered):
        raw = row.astype("<i4").tobytes()[: int(lengths[index])]
        fp = Fingerprint.from_dict(json.loads(raw.decode("utf-8")), f"rank {index} (gathered)")
        fp.source = None
        result.append(fp)
    return result


# --------------------------------------------------------------------------- offline peers

_PEERS: weakref.WeakKeyDictionary[Any, list[Fingerprint]] = weakref.WeakKeyDictionary()


def use_peer_fingerprints(net: Any, peers: Iterable[Fingerprint | PathLike]) -> None:
    """Make GA801 compare *net* with *peers* when communication is not initialised.

    *peers* are the fingerprints of the other ranks (:class:`Fingerprint` objects or paths of
    files written by :meth:`Fingerprint.save`). When ``graphaudit.audit(net)`` runs without an
    initialised ``mindspore.communication``, GA801 fingerprints *net* and compares it with
    them, as if they were the other ranks of its world; with communication initialised the
    ranks' real fingerprints are gathered instead and *peers* are ignored. Register the
    network that is audited (the backbone, when a wrapper is given to ``audit``). The
    registration lives as long as *net* does; :func:`clear_peer_fingerprints` removes it.
    """
    loaded = [p if isinstance(p, Fingerprint) else Fingerprint.load(p) for p in peers]
    _PEERS[net] = loaded


def clear_peer_fingerprints(net: Any) -> None:
    """Forget the peers given to :func:`use_peer_fingerprints` for *net*."""
    _PEERS.pop(net, None)


def peer_fingerprints(net: Any) -> list[Fingerprint]:
    """The peers registered for *net* with :func:`use_peer_fingerprints` (a copy; empty if none)."""
    try:
        return list(_PEERS.get(net, ()))
    except TypeError:  # an unhashable object
        return []

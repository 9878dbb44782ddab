"""Hash every parameter of a network, and exchange the hashes across the ranks of a job.

The file format is :mod:`graphaudit.distributed.fingerprint`; this module reads MindSpore tensors
(:func:`fingerprint_network`) and runs its collectives (:func:`gather_fingerprints`).

Example:
    >>> from mindspore import nn
    >>> fp = fingerprint_network(nn.Dense(2, 2, weight_init="ones"), rank=0, world_size=1)
    >>> fp.parameters["weight"].digest == fingerprint_network(nn.Dense(2, 2, weight_init="ones")).parameters["weight"].digest
    True
"""

from __future__ import annotations

import hashlib
import json
import os
import socket
from typing import Any

import numpy as np
from mindspore import Tensor, nn, ops

from graphaudit.capture.network.values import tensor_values, uninitialized
from graphaudit.distributed.fingerprint import Fingerprint, ParameterDigest
from graphaudit.errors import ArgumentError, ArgumentTypeError, ExchangeError, GraphAuditError
from graphaudit.version import __version__

__all__ = [
    "communication_world",
    "digest_parameter",
    "env_int",
    "fingerprint_network",
    "gather_fingerprints",
    "per_rank_statistics",
]

#: Cells whose non-trainable parameters are statistics of the batches a rank saw.
_STATISTICS_CELLS = ("BatchNorm", "InstanceNorm")


def digest_parameter(param: Any) -> ParameterDigest:
    """The :class:`~graphaudit.distributed.fingerprint.ParameterDigest` of one ``Parameter`` (or ``Tensor``)."""
    array = np.ascontiguousarray(tensor_values(param))
    if array.dtype.byteorder == ">":
        array = array.astype(array.dtype.newbyteorder("<"))
    dtype = str(param.dtype)
    shape = tuple(int(d) for d in param.shape)
    hasher = hashlib.blake2b(digest_size=16)
    hasher.update(f"{dtype}|{shape}|".encode())
    hasher.update(memoryview(array).cast("B") if array.size else b"")
    return ParameterDigest(hasher.hexdigest(), shape, dtype, bool(getattr(param, "requires_grad", True)))


def per_rank_statistics(net: Any) -> frozenset[str]:
    """The parameters of *net* that rightly differ across data-parallel ranks while training.

    A BatchNorm's (or tracking InstanceNorm's) moving mean and variance are updated in the
    forward pass from the batch the rank normalised, its own shard: without ``SyncBatchNorm``
    they differ across ranks from the first step, and nothing averages them. They are the
    non-trainable parameters of cells whose class name says BatchNorm or InstanceNorm.

    Example:
        >>> from mindspore import nn
        >>> sorted(per_rank_statistics(nn.SequentialCell([nn.Dense(2, 2), nn.BatchNorm1d(2)])))
        ['1.moving_mean', '1.moving_variance']
    """
    return frozenset(
        param.name
        for _, cell in net.cells_and_names()
        if any(word in type(cell).__name__ for word in _STATISTICS_CELLS)
        for param in cell.get_parameters(expand=False)
        if not param.requires_grad
    )


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


def env_int(*names: str) -> int | None:
    for name in names:
        value = os.environ.get(name, "")
        if value.isdigit():
            return int(value)
    return None


def fingerprint_network(net: Any, *, rank: int | None = None, world_size: int | None = None) -> Fingerprint:
    """The :class:`Fingerprint` of every parameter of *net* (a ``nn.Cell``), by parameter name.

    ``rank`` and ``world_size`` default to the communication world when it is initialised,
    else to the ``RANK_ID`` / ``RANK_SIZE`` environment variables (set by ``msrun``), else
    ``0`` and ``1``. Parameters are read, never changed. Shared parameters count once.
    """
    if not isinstance(net, nn.Cell):
        raise ArgumentTypeError(
            f"fingerprint() expects a mindspore.nn.Cell, got {type(net).__name__}: pass the network"
        )
    lazy = uninitialized(net.parameters_dict().items(), type(net).__name__)
    if lazy:
        raise ArgumentError(
            f"fingerprint() cannot read {lazy}: they are "
            "not initialised yet (no_init_parameters(), or lazy init), and reading them would initialise "
            "them, changing the network. Fingerprint it once initialised (net.init_parameters_data()) or "
            "loaded from its checkpoint."
        )
    world = communication_world()
    if rank is None:
        rank = world[0] if world else env_int("RANK_ID", "MS_NODE_ID")
        rank = 0 if rank is None else rank
    if world_size is None:
        world_size = world[1] if world else env_int("RANK_SIZE", "MS_WORKER_NUM")
        world_size = 1 if world_size is None else world_size
    parameters = {name: digest_parameter(param) for name, param in net.parameters_dict().items()}
    return Fingerprint(parameters, rank, world_size, socket.gethostname(), type(net).__name__, __version__)


def _all_gather_int32(values: np.ndarray) -> np.ndarray:
    """Every rank's *values*, stacked; :class:`ExchangeError` when a rank does not join.

    MindSpore bounds the wait itself: on the CPU a rank that never calls the collective makes
    the others' ``AllGather`` fail after about 30 s (measured on MindSpore 2.10 with a peer
    asleep for 40 s), with a bare "Launch kernel failed" error; it is said here in words.
    """
    try:
        return ops.AllGather()(Tensor(np.ascontiguousarray(values, dtype=np.int32))).asnumpy()
    except RuntimeError as err:
        raise ExchangeError(
            "the ranks' exchange (AllGather on the world group) failed: a rank did not join it in time "
            "or has died. graphaudit's exchanges are collectives: call audit() (and the watch) at the "
            "same point on every rank. Later collectives of this job may pair with the wrong partner: "
            f"stop the job. (MindSpore: {str(err).splitlines()[0] if str(err) else type(err).__name__})"
        ) from err


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
